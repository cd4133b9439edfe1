import type { CaptchaConfig } from "../project/config.ts";
import type { AuthContext, Handler } from "./context.ts";
import { AuthError } from "./errors.ts";
import { requireAdmin } from "./http/authenticate.ts";
import { clientIp, pick, readJson } from "./http/request.ts";

/**
 * [auth.captcha]: with it on, the endpoints people sign up and sign in through want a CAPTCHA
 * token in the body (`gotrue_meta_security.captcha_token`, supabase-js's `options.captchaToken`),
 * verified by the provider, as Auth's verifyCaptcha middleware does: sign-up, the password grant
 * (a refresh, PKCE or ID token exchange does not ask), one-time codes and magic links, recovery,
 * resend and a passkey sign-in's options. An admin caller is not asked.
 *
 * The provider's documented test secrets are answered here as the provider answers them, so a
 * project can run its CAPTCHA flow offline; any other secret is checked with the provider itself,
 * as Auth does (and, offline, fails as Auth fails when it cannot reach it).
 */
export function captchaProtected(handler: Handler): Handler {
  return async (ctx, request) => {
    if (ctx.config.auth.captcha && (await asksForCaptcha(ctx, request)))
      await verifyCaptcha(ctx.config.auth.captcha, request);
    return handler(ctx, request);
  };
}

/** Whether this request is asked for a token: not from an admin, not a token exchange that
 * follows an earlier sign-in (isIgnoreCaptchaRoute). */
async function asksForCaptcha(ctx: AuthContext, request: Request): Promise<boolean> {
  const url = new URL(request.url);
  if (url.pathname.endsWith("/token")) {
    const grant = url.searchParams.get("grant_type");
    if (grant === "pkce" || grant === "refresh_token" || grant === "id_token") return false;
  }
  try {
    await requireAdmin(ctx, request);
    return false;
  } catch {
    return true;
  }
}

async function verifyCaptcha(captcha: CaptchaConfig, request: Request): Promise<void> {
  const body = pick(await readJson(request.clone()), { gotrue_meta_security: "object" });
  const security = pick(body.gotrue_meta_security ?? null, { captcha_token: "string" });
  const token = (security.captcha_token ?? "").trim();
  if (!token) throw refused("no captcha_token found");
  const verdict = await providerVerdict(captcha, token, clientIp(request));
  if (!verdict.success) throw refused(verdict.errorCodes.join(", "));
}

const refused = (reason: string) =>
  new AuthError(400, "captcha_failed", `captcha protection: request disallowed (${reason})`);

interface Verdict {
  success: boolean;
  errorCodes: string[];
}

/** What each provider's documented test secrets answer: Turnstile's whatever the token, hCaptcha's
 * for its test token only. */
const TEST_SECRETS: Record<
  CaptchaConfig["provider"],
  Record<string, (token: string) => Verdict>
> = {
  turnstile: {
    "1x0000000000000000000000000000000AA": () => ({ success: true, errorCodes: [] }),
    "2x0000000000000000000000000000000AA": () => ({
      success: false,
      errorCodes: ["invalid-input-response"],
    }),
    "3x0000000000000000000000000000000AA": () => ({
      success: false,
      errorCodes: ["timeout-or-duplicate"],
    }),
  },
  hcaptcha: {
    "0x0000000000000000000000000000000000000000": (token) =>
      token === "10000000-aaaa-bbbb-cccc-000000000001"
        ? { success: true, errorCodes: [] }
        : { success: false, errorCodes: ["invalid-input-response"] },
  },
};

const VERIFY_URLS: Record<CaptchaConfig["provider"], string> = {
  hcaptcha: "https://hcaptcha.com/siteverify",
  turnstile: "https://challenges.cloudflare.com/turnstile/v0/siteverify",
};

/** The provider's verdict on the token (security.VerificationResponse). */
async function providerVerdict(
  captcha: CaptchaConfig,
  token: string,
  remoteIp: string,
): Promise<Verdict> {
  const tests = TEST_SECRETS[captcha.provider];
  if (Object.hasOwn(tests, captcha.secret))
    return (tests[captcha.secret] as (t: string) => Verdict)(token);
  try {
    const response = await fetch(VERIFY_URLS[captcha.provider], {
      method: "POST",
      body: new URLSearchParams({ secret: captcha.secret, response: token, remoteip: remoteIp }),
      signal: AbortSignal.timeout(10_000),
    });
    const verdict = (await response.json()) as { success?: unknown; "error-codes"?: unknown };
    const codes = verdict["error-codes"];
    return {
      success: verdict.success === true,
      errorCodes: Array.isArray(codes) ? codes.map(String) : [],
    };
  } catch (error) {
    console.warn(`[local auth] the ${captcha.provider} check failed: ${(error as Error).message}`);
    throw new AuthError(500, "unexpected_failure", "captcha verification process failed");
  }
}
