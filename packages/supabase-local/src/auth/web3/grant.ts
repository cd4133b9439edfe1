// POST /token?grant_type=web3 (supabase-js signInWithWeb3; api/token.ts dispatches the grant): a wallet's signature of a Sign in with
// Solana or Sign in with Ethereum message signs in the account of its address, made at the first
// sign-in, as Auth's Web3Grant does ([auth.web3.solana], [auth.web3.ethereum] enabled). The
// message must be for this project: its URI one the redirect rules allow, its domain the URI's
// host, over HTTPS unless on localhost, and signed within ten minutes of its Issued At.
import type { AuthContext } from "../context.ts";
import { AuthError, authError, oauthError } from "../errors.ts";
import { beforeUserCreated } from "../hooks/before-user-created.ts";
import { isRedirectAllowed } from "../http/redirect.ts";
import { clientIp, readParams } from "../http/request.ts";
import { audit } from "../models/audit.ts";
import {
  createIdentity,
  findIdentityByProvider,
  refreshIdentity,
  updateProviders,
} from "../models/identities.ts";
import {
  createUser,
  findUserById,
  isBanned,
  mergeIdentityMetadata,
  type UserRow,
} from "../models/users.ts";
import { issueSession } from "../tokens/token-response.ts";
import {
  type Chain,
  MessageError,
  parseSignInMessage,
  type SignInMessage,
} from "../web3/message.ts";
import { ethereumSigned, solanaSigned } from "./signatures.ts";

const PROVIDER = "web3";
const NAMES: Record<Chain, string> = { solana: "Solana", ethereum: "Ethereum" };

export async function web3Grant(ctx: AuthContext, request: Request): Promise<Response> {
  const { web3 } = ctx.config.auth;
  if (!web3.solana.enabled && !web3.ethereum.enabled) throw authError("web3Disabled");
  const params = await readParams(request, {
    message: "string",
    signature: "string",
    chain: "string",
  });
  const chain = params.chain;
  if (chain !== "solana" && chain !== "ethereum") throw authError("web3UnsupportedChain");
  const name = NAMES[chain];
  if (!web3[chain].enabled) throw authError("web3Disabled", `${name} Web3 provider is disabled`);

  const text = params.message ?? "";
  const bytes = Buffer.byteLength(text, "utf8");
  if (bytes < 64) throw invalid("message is too short");
  if (bytes > 20 * 1024) throw invalid("message must not exceed 20KB");
  const signature = params.signature ?? "";
  let signed: (message: SignInMessage) => boolean;
  if (chain === "solana") {
    if (signature.length !== 86 && signature.length !== 88) {
      throw invalid("signature must be 64 bytes encoded as base64 with or without padding");
    }
    // base64 or base64url, with or without its padding
    const unpadded = signature.replace(/=+$/, "").replaceAll("+", "-").replaceAll("/", "_");
    if (!/^[A-Za-z0-9_-]*$/.test(unpadded) || unpadded.length % 4 === 1) {
      throw invalid("signature does not contain valid base64 characters");
    }
    const decoded = Buffer.from(unpadded, "base64url");
    signed = (message) => solanaSigned(message, decoded);
  } else {
    if (signature.replace(/^0x/, "").length !== 130) {
      throw invalid(
        "signature must be 65 bytes long, encoded as a 130 character-long hexadecimal string",
      );
    }
    signed = (message) => ethereumSigned(message, signature);
  }
  let message: SignInMessage;
  try {
    message = parseSignInMessage(text, chain);
  } catch (error) {
    if (error instanceof MessageError) throw invalid(error.message);
    throw error;
  }
  if (!signed(message)) {
    throw oauthError("invalid_grant", "Signature does not match address in message");
  }
  checkAudience(ctx, message, name);
  checkTime(ctx, message, chain, name);

  const providerId = `${PROVIDER}:${chain}:${message.address}`;
  // the provider.Claims Auth keeps as identity data and user metadata (structs.Map)
  const data = {
    sub: providerId,
    email_verified: false,
    phone_verified: false,
    custom_claims: {
      address: message.address,
      chain,
      network: message.chainId,
      domain: message.domain,
      // a *string for Ethereum (null without one), a string for Solana
      statement: message.statement ?? (chain === "ethereum" ? null : ""),
    },
  };
  const ip = clientIp(request);
  const session = await ctx.db.transaction(async (tx) => {
    let user: UserRow | undefined;
    const existing = await findIdentityByProvider(tx, providerId, PROVIDER);
    if (existing) {
      await refreshIdentity(tx, existing.id, data);
      await mergeIdentityMetadata(tx, existing.user_id, data);
      await updateProviders(tx, existing.user_id);
      user = await findUserById(tx, existing.user_id);
      if (!user) throw authError("userNotFound");
    } else {
      if (!ctx.config.auth.enableSignup) throw authError("signupDisabled");
      const id = await beforeUserCreated(ctx, tx, request, {
        provider: PROVIDER,
        userMetadata: data,
      });
      user = await createUser(tx, { id, provider: PROVIDER, userMetadata: data });
      await createIdentity(tx, user.id, PROVIDER, data);
    }
    // createAccountFromExternalIdentity's refusal is a 403 (the password grant's a 400)
    if (isBanned(user, ctx.now())) throw authError("userBanned").withStatus(403);
    await audit(tx, ip, user, "login", { provider: PROVIDER });
    await audit(tx, ip, user, "login", {
      provider: PROVIDER,
      chain,
      network: message.chainId,
      address: message.address,
      domain: message.domain,
      uri: message.uri.raw,
    });
    return issueSession(ctx, tx, user, "web3", request);
  });
  return Response.json(session);
}

function invalid(message: string): AuthError {
  return authError("validationFailed", message);
}

/** The message was signed for this project: its URI allowed here, its domain the URI's host. */
function checkAudience(ctx: AuthContext, message: SignInMessage, name: string): void {
  const { uri } = message;
  const local = uri.hostname === "localhost";
  if (uri.scheme !== "https" && !local) {
    throw oauthError(
      "invalid_grant",
      `Signed ${name} message is using URI which does not use HTTPS`,
    );
  }
  if (!isRedirectAllowed(ctx.config, uri.raw)) {
    throw oauthError(
      "invalid_grant",
      `Signed ${name} message is using URI which is not allowed on this server, message was signed for another app`,
    );
  }
  if (
    !local &&
    (uri.host !== message.domain || !isRedirectAllowed(ctx.config, `https://${message.domain}/`))
  ) {
    throw oauthError(
      "invalid_grant",
      `Signed ${name} message is using a Domain that does not match the one in URI which is not allowed on this server`,
    );
  }
}

/** Not before its Not Before, not after its Expiration Time, and within the validity of its
 * Issued At either way. */
function checkTime(ctx: AuthContext, message: SignInMessage, chain: Chain, name: string): void {
  const now = ctx.now().getTime();
  const { notBefore, expirationTime, issuedAt } = message;
  if (notBefore && now < notBefore.getTime()) {
    throw oauthError("invalid_grant", `Signed ${name} message becomes valid in the future`);
  }
  // Auth's Ethereum grant reads the Expiration Time only beside a Not Before (web3.go); without
  // one, the validity below still bounds the message
  const readsExpiry = chain === "solana" || notBefore !== undefined;
  if (readsExpiry && expirationTime && now > expirationTime.getTime()) {
    throw oauthError("invalid_grant", `Signed ${name} message is expired`);
  }
  const validity = ctx.config.auth.web3[chain].maximumValidityMs;
  if (now > issuedAt.getTime() + validity) {
    throw oauthError("invalid_grant", `${name} message was issued too long ago`);
  }
  if (now < issuedAt.getTime() - validity) {
    throw oauthError("invalid_grant", `${name} message was issued too far in the future`);
  }
}
