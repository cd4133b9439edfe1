/** Recovery codes as the pages show them (the server side is recovery-codes.server.ts). */

/** Few enough left that the account pages say so. */
export const FEW_RECOVERY_CODES = 3;

export interface RecoveryCodesStatus {
  total: number;
  remaining: number;
}

/** A code grouped for reading: "k4m9x7qp2ab8ht3z" → "k4m9-x7qp-2ab8-ht3z". */
export function groupCode(code: string): string {
  return code.match(/.{1,4}/g)?.join("-") ?? code;
}
