import { authError } from "../errors.ts";
import type { PkceParams } from "../models/flow-state.ts";

/** validatePKCEParams: both or neither; 43–128 unreserved characters; s256 or plain. */
export function pkceRequested(params: PkceParams): boolean {
  const { code_challenge: challenge, code_challenge_method: method } = params;
  if (!challenge && !method) return false;
  if (!challenge || !method) throw authError("pkceParamsInvalid");
  if (challenge.length < 43 || challenge.length > 128) {
    throw authError("pkceParamsInvalid", "code challenge has to be between 43 and 128 characters");
  }
  if (!/^[A-Za-z0-9\-._~]+$/.test(challenge)) {
    throw authError(
      "pkceParamsInvalid",
      "code challenge can only contain alphanumeric characters, hyphens, periods, underscores and tildes",
    );
  }
  if (!["s256", "plain"].includes(method.toLowerCase())) {
    throw authError("pkceParamsInvalid", "code challenge method not supported");
  }
  return true;
}
