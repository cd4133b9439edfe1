import { captchaProtected } from "../captcha.ts";
import type { AuthContext, Handler } from "../context.ts";
import type { Bucket } from "../rate-limits.ts";
import {
  createUserAdmin,
  deleteFactorAdmin,
  deleteUserAdmin,
  generateLink,
  getUserAdmin,
  listFactorsAdmin,
  listUsers,
  updateFactorAdmin,
  updateUserAdmin,
} from "./admin.ts";
import { adminAuditLog } from "./audit.ts";
import {
  adminOAuthDisabled,
  customProvidersDisabled,
  listSsoProviders,
  oauthGrantsDisabled,
  oauthServerDisabled,
  samlDisabled,
  scimDisabled,
  ssoProviderNotFound,
} from "./disabled.ts";
import { authorize, callback } from "./external.ts";
import { health } from "./health.ts";
import { deleteIdentity, linkIdentity } from "./identities.ts";
import { invite } from "./invite.ts";
import { jwks, openidConfiguration } from "./jwks.ts";
import { logout } from "./logout.ts";
import { challengeFactor, enrollFactor, unenrollFactor, verifyFactor } from "./mfa.ts";
import { magicLink, otp } from "./otp.ts";
import {
  passkeyAuthenticationOptions,
  passkeyAuthenticationVerify,
} from "./passkey-authentication.ts";
import { passkeyRegistrationOptions, passkeyRegistrationVerify } from "./passkey-registration.ts";
import {
  deletePasskeyAdmin,
  deletePasskeyOfUser,
  listPasskeys,
  listPasskeysAdmin,
  updatePasskey,
} from "./passkeys.ts";
import { reauthenticate } from "./reauthenticate.ts";
import { recover } from "./recover.ts";
import {
  deleteRecoveryCodes,
  generateRecoveryCodes,
  recoveryCodesStatus,
  regenerateRecoveryCodes,
  verifyRecoveryCode,
} from "./recovery-codes.ts";
import { resend } from "./resend.ts";
import { settings } from "./settings.ts";
import { signup } from "./signup.ts";
import { token } from "./token.ts";
import { getUser, updateUser } from "./user.ts";
import { verify } from "./verify.ts";

/** The endpoint table: method, path (relative to /auth/v1), handler — as the real router. */
export const routes: Array<[method: string, path: string, handler: Handler]> = [
  ["GET", "/health", health],
  ["GET", "/settings", settings],
  ["GET", "/.well-known/jwks.json", jwks],
  ["POST", "/signup", captchaProtected(signup)],
  ["POST", "/token", captchaProtected(token)],
  ["POST", "/otp", limited("otp", captchaProtected(otp))],
  ["POST", "/magiclink", limited("magic_link", captchaProtected(magicLink))],
  ["GET", "/verify", limited("token_verifications", verify)],
  ["POST", "/verify", limited("token_verifications", verify)],
  ["POST", "/recover", limited("recover", captchaProtected(recover))],
  ["POST", "/resend", limited("resend", captchaProtected(resend))],
  ["GET", "/user", getUser],
  ["PUT", "/user", limited("user", updateUser)],
  ["GET", "/user/identities/authorize", linkIdentity],
  ["DELETE", "/user/identities/:id", deleteIdentity],
  ["GET", "/reauthenticate", reauthenticate],
  ["POST", "/logout", logout],
  ["GET", "/admin/users", listUsers],
  ["POST", "/admin/users", createUserAdmin],
  ["GET", "/admin/users/:id", getUserAdmin],
  ["PUT", "/admin/users/:id", updateUserAdmin],
  ["DELETE", "/admin/users/:id", deleteUserAdmin],
  ["GET", "/admin/users/:id/factors", listFactorsAdmin],
  ["DELETE", "/admin/users/:id/factors/:factor_id", deleteFactorAdmin],
  ["GET", "/admin/users/:id/passkeys", listPasskeysAdmin],
  ["DELETE", "/admin/users/:id/passkeys/:passkey_id", deletePasskeyAdmin],
  ["POST", "/admin/generate_link", generateLink],
  ["POST", "/invite", invite],
  ["GET", "/authorize", authorize],
  ["GET", "/callback", callback],
  ["POST", "/callback", callback],
  // Before /factors/:id, so that "recovery-codes" is not taken for a factor id.
  ["GET", "/factors/recovery-codes", recoveryCodesStatus],
  ["POST", "/factors/recovery-codes", generateRecoveryCodes],
  ["DELETE", "/factors/recovery-codes", deleteRecoveryCodes],
  ["POST", "/factors/recovery-codes/verify", verifyRecoveryCode],
  ["POST", "/factors/recovery-codes/regenerate", regenerateRecoveryCodes],
  ["POST", "/factors", enrollFactor],
  ["POST", "/factors/:id/challenge", challengeFactor],
  ["POST", "/factors/:id/verify", verifyFactor],
  ["DELETE", "/factors/:id", unenrollFactor],
  // The limiter of /authentication/options runs after the enabled check (passkey-authentication.ts).
  ["POST", "/passkeys/authentication/options", passkeyAuthenticationOptions],
  ["POST", "/passkeys/authentication/verify", passkeyAuthenticationVerify],
  ["POST", "/passkeys/registration/options", passkeyRegistrationOptions],
  ["POST", "/passkeys/registration/verify", passkeyRegistrationVerify],
  ["GET", "/passkeys", listPasskeys],
  ["PATCH", "/passkeys/:passkey_id", updatePasskey],
  ["DELETE", "/passkeys/:passkey_id", deletePasskeyOfUser],
  // Features a local project has off: the answers of a project without them (api/disabled.ts)
  ["GET", "/.well-known/openid-configuration", openidConfiguration],
  ["GET", "/.well-known/oauth-authorization-server", oauthServerDisabled],
  ["ALL", "/sso", samlDisabled],
  ["ALL", "/sso/*", samlDisabled],
  ["ALL", "/oauth/*", oauthServerDisabled],
  ["ALL", "/user/oauth/grants", oauthGrantsDisabled],
  ["ALL", "/admin/oauth/*", adminOAuthDisabled],
  ["ALL", "/admin/custom-providers", customProvidersDisabled],
  ["ALL", "/admin/custom-providers/*", customProvidersDisabled],
  ["GET", "/admin/sso/providers", listSsoProviders],
  ["ALL", "/admin/sso/providers/:idp_id", ssoProviderNotFound],
  ["ALL", "/scim/v2/*", scimDisabled],
  ["GET", "/admin/audit", adminAuditLog],
  ["PUT", "/admin/users/:id/factors/:factor_id", updateFactorAdmin],
];

/** The route table's middleware: the handler runs only within the bucket's limit. */
function limited(bucket: Bucket, handler: Handler): Handler {
  return (ctx: AuthContext, request: Request) => {
    ctx.rateLimits.check(bucket, request);
    return handler(ctx, request);
  };
}
