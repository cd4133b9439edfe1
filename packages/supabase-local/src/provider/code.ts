import { createHash } from "node:crypto";
import { jwtVerify, SignJWT } from "jose";
import type { ProviderContext } from "./context.ts";

/**
 * The account the local provider page hands back, as a provider's user info would, bound to the
 * OAuth `state` of the sign-in it answers.
 */
export interface ProviderAccount {
  provider: string;
  sub: string;
  name: string;
  email: string;
  email_verified: boolean;
  state_hash: string;
}

/** How long a code from the provider page may wait for its exchange. */
const CODE_TTL_SECONDS = 600;

/** The stand-in provider's codes get a key of their own, so they can never pass for an API JWT. */
const providerKeyOf = (ctx: Pick<ProviderContext, "keys">) =>
  createHash("sha256").update(`local-oauth-provider:${ctx.keys.jwtSecret}`).digest();

/** What a code carries of the state it answers (the state itself is the Auth server's business). */
export const hashState = (state: string) => createHash("sha256").update(state).digest("base64url");

/** Where /authorize sends the browser for `provider`: the provider page beside the Auth API. */
export function providerPageUrl(
  ctx: Pick<ProviderContext, "externalUrl">,
  provider: string,
  query: Record<string, string>,
): string {
  const base = ctx.externalUrl().replace(/\/auth\/v1$/, "");
  return `${base}/provider/${provider}/authorize?${new URLSearchParams(query)}`;
}

/** The stand-in provider's authorization code: the chosen account, signed, bound to the state. */
export async function signProviderCode(
  ctx: ProviderContext,
  account: ProviderAccount,
): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  return new SignJWT({ ...account, typ: "local_provider_code" })
    .setProtectedHeader({ alg: "HS256", typ: "JWT" })
    .setIssuedAt(now)
    .setExpirationTime(now + CODE_TTL_SECONDS)
    .sign(providerKeyOf(ctx));
}

/**
 * The provider's side of the token exchange: the account a code stands for, when the code is the
 * provider page's own, unexpired, for `provider` and for this `state`; undefined otherwise.
 */
export async function readProviderCode(
  ctx: Pick<ProviderContext, "keys">,
  code: string,
  state: string,
  provider: string,
): Promise<ProviderAccount | undefined> {
  let payload: Record<string, unknown>;
  try {
    payload = (await jwtVerify(code, providerKeyOf(ctx), { algorithms: ["HS256"] })).payload;
  } catch {
    return undefined;
  }
  if (
    payload.typ !== "local_provider_code" ||
    payload.provider !== provider ||
    payload.state_hash !== hashState(state) ||
    typeof payload.sub !== "string" ||
    payload.sub === ""
  ) {
    return undefined;
  }
  return payload as unknown as ProviderAccount;
}
