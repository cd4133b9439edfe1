/**
 * Every error the Auth API answers with, built in one place (as supabase/auth internal/api/
 * apierrors does) and rendered in the shape the caller asked for with X-Supabase-Api-Version.
 */
export class AuthError extends Error {
  readonly status: number;
  readonly code: string;
  readonly reasons?: string[];
  /** OAuth-style errors ({ error, error_description }) use `code` as `error`. */
  readonly oauth: boolean;
  /** An error Auth built without an error code (a hook's refusal): the body says `unknown` (or
   * `unexpected_failure` for a 500) and no x-sb-error-code header is sent. */
  readonly uncoded: boolean;
  constructor(
    status: number,
    code: string,
    message: string,
    extra: { reasons?: string[]; oauth?: boolean; uncoded?: boolean } = {},
  ) {
    super(message);
    this.status = status;
    this.code = code;
    this.reasons = extra.reasons;
    this.oauth = extra.oauth ?? false;
    this.uncoded = extra.uncoded ?? false;
  }

  /** The same message under another error_code. */
  withCode(code: string): AuthError {
    return new AuthError(this.status, code, this.message, {
      reasons: this.reasons,
      oauth: this.oauth,
    });
  }

  /** The same error with another HTTP status (the real service reuses codes across statuses). */
  withStatus(status: number): AuthError {
    return new AuthError(status, this.code, this.message, {
      reasons: this.reasons,
      oauth: this.oauth,
    });
  }
}

type Entry = readonly [status: number, code: string, message: string];

/** The table: name -> [HTTP status, error_code, message] as the real service sends them. */
const TABLE = {
  badJson: [400, "bad_json", "Could not parse request body as JSON"],
  nulInBody: [
    400,
    "validation_failed",
    "Strings in the request body must not contain the NUL character (\\u0000)",
  ],
  tooLarge: [413, "request_entity_too_large", "Request body too large (max 1048576 bytes)"],
  notFound: [404, "not_found", "Not Found"],
  methodNotAllowed: [405, "method_not_allowed", "Method Not Allowed"],
  emailRequired: [400, "validation_failed", "An email address is required"],
  emailTooLong: [400, "validation_failed", "An email address is too long"],
  signupNeedsPassword: [400, "validation_failed", "Signup requires a valid password"],
  emailOrPhoneSignup: [
    400,
    "validation_failed",
    "Only an email address or phone number should be provided on signup.",
  ],
  emailOrPhoneLogin: [
    400,
    "validation_failed",
    "Only an email address or phone number should be provided on login.",
  ],
  missingEmailOrPhone: [400, "validation_failed", "missing email or phone"],
  passwordTooLong: [400, "validation_failed", "Password cannot be longer than 72 characters"],
  signupDisabled: [422, "signup_disabled", "Signups not allowed for this instance"],
  emailSignupDisabled: [400, "email_provider_disabled", "Email signups are disabled"],
  // token.go and magic_link.go answer 422; requireEmailProvider (/recover) and resend.go 400
  emailLoginsDisabled: [422, "email_provider_disabled", "Email logins are disabled"],
  anonymousDisabled: [422, "anonymous_provider_disabled", "Anonymous sign-ins are disabled"],
  phoneProviderDisabled: [400, "phone_provider_disabled", "Unsupported phone provider"],
  userAlreadyExists: [422, "user_already_exists", "User already registered"],
  emailExists: [422, "email_exists", "A user with this email address has already been registered"],
  invalidCredentials: [400, "invalid_credentials", "Invalid login credentials"],
  unsupportedGrant: [400, "invalid_credentials", "unsupported_grant_type"],
  emailNotConfirmed: [400, "email_not_confirmed", "Email not confirmed"],
  userBanned: [400, "user_banned", "User is banned"],
  refreshTokenInvalid: [400, "validation_failed", "Refresh token is not valid"],
  refreshTokenNotFound: [
    400,
    "refresh_token_not_found",
    "Invalid Refresh Token: Refresh Token Not Found",
  ],
  refreshTokenAlreadyUsed: [
    400,
    "refresh_token_already_used",
    "Invalid Refresh Token: Already Used",
  ],
  refreshNoSession: [400, "session_not_found", "Invalid Refresh Token: No Valid Session Found"],
  sessionExpired: [400, "session_expired", "Invalid Refresh Token: Session Expired"],
  pkceParamsMissing: [
    400,
    "validation_failed",
    "invalid request: both auth code and code verifier should be non-empty",
  ],
  pkceParamsInvalid: [
    400,
    "validation_failed",
    "PKCE flow requires code_challenge_method and code_challenge",
  ],
  flowStateNotFound: [404, "flow_state_not_found", "invalid flow state, no valid flow state found"],
  flowStateExpired: [422, "flow_state_expired", "invalid flow state, flow state has expired"],
  badCodeVerifier: [
    400,
    "bad_code_verifier",
    "code challenge does not match previously saved code verifier",
  ],
  verifyNeedsType: [400, "validation_failed", "Verify requires a verification type"],
  verifyNeedsToken: [400, "validation_failed", "Verify requires a token or a token hash"],
  verifyTokenOrHash: [400, "validation_failed", "Verify requires either a token or a token hash"],
  verifyOnlyHash: [400, "validation_failed", "Only the token_hash and type should be provided"],
  verifyEmailOrPhone: [
    400,
    "validation_failed",
    "Only an email address or phone number should be provided on verify",
  ],
  hashNeedsEmailType: [400, "validation_failed", "Invalid email verification type"],
  invalidEmailFormat: [422, "validation_failed", "Invalid email format"],
  otpExpired: [403, "otp_expired", "Token has expired or is invalid"],
  linkExpired: [403, "otp_expired", "Email link is invalid or has expired"],
  otpSignupDisabled: [422, "otp_disabled", "Signups not allowed for otp"],
  otpNeedsEmailOrPhone: [400, "validation_failed", "One of email or phone must be set"],
  otpEmailOrPhone: [
    400,
    "validation_failed",
    "Only an email address or phone number should be provided",
  ],
  recoverNeedsEmail: [400, "validation_failed", "Password recovery requires an email"],
  resendBadType: [
    400,
    "validation_failed",
    "Missing one of these types: signup, email_change, sms, phone_change",
  ],
  resendNeedsEmail: [400, "validation_failed", "Type provided requires an email address"],
  resendNeedsPhone: [400, "validation_failed", "Type provided requires a phone number"],
  noAuthorization: [401, "no_authorization", "This endpoint requires a valid Bearer token"],
  badJwt: [403, "bad_jwt", "invalid JWT: unable to parse or verify signature"],
  jwtMissingSub: [403, "bad_jwt", "invalid claim: missing sub claim"],
  userFromSubMissing: [403, "user_not_found", "User from sub claim in JWT does not exist"],
  sessionFromJwtMissing: [
    403,
    "session_not_found",
    "Session from session_id claim in JWT does not exist",
  ],
  // UserGet and DeleteIdentity compare the token's aud with the request's (user.go, identity.go)
  audienceMismatch: [400, "validation_failed", "Token audience doesn't match request audience"],
  identityAudienceMismatch: [
    403,
    "unexpected_audience",
    "Token audience doesn't match request audience",
  ],
  notAdmin: [403, "not_admin", "User not allowed"],
  appMetadataNeedsAdmin: [403, "not_admin", "Updating app_metadata requires admin privileges"],
  samePassword: [422, "same_password", "New password should be different from the old password."],
  reauthenticationNeeded: [
    400,
    "reauthentication_needed",
    "Password update requires reauthentication",
  ],
  reauthenticationNotValid: [422, "reauthentication_not_valid", "Nonce has expired or is invalid"],
  reauthNeedsEmailOrPhone: [
    400,
    "validation_failed",
    "Reauthentication requires the user to have an email or a phone number",
  ],
  verifyEmailFirst: [422, "email_not_confirmed", "Please verify your email first."],
  verifyPhoneFirst: [422, "phone_not_confirmed", "Please verify your phone first."],
  anonymousPasswordUpdate: [
    422,
    "validation_failed",
    "Updating password of an anonymous user without an email or phone is not allowed",
  ],
  userNotFound: [404, "user_not_found", "User not found"],
  userIdNotUuid: [404, "validation_failed", "user_id must be an UUID"],
  adminNeedsEmailOrPhone: [
    400,
    "validation_failed",
    "Cannot create a user without either an email or phone",
  ],
  adminPasswordOrHash: [
    400,
    "validation_failed",
    "Only a password or a password hash should be provided",
  ],
  idNotUuid: [400, "validation_failed", "ID must conform to the uuid v4 format"],
  userWithEmailNotFound: [404, "user_not_found", "User with this email not found"],
  generateLinkBadType: [400, "validation_failed", "Invalid email action link type requested"],
  unsupportedPhone: [400, "phone_provider_disabled", "Unsupported phone provider"],
  // MFA (mfa.go, loadFactor, requireNotAnonymous)
  anonymousNotAllowed: [
    403,
    "no_authorization",
    "Anonymous user not allowed to perform these actions",
  ],
  factorIdNotUuid: [404, "validation_failed", "factor_id must be an UUID"],
  factorNotFound: [404, "mfa_factor_not_found", "Factor not found"],
  factorTypeInvalid: [400, "validation_failed", "factor_type needs to be totp, phone, or webauthn"],
  totpEnrollDisabled: [422, "mfa_totp_enroll_not_enabled", "MFA enroll is disabled for TOTP"],
  phoneEnrollDisabled: [422, "mfa_phone_enroll_not_enabled", "MFA enroll is disabled for Phone"],
  phoneVerifyDisabled: [
    422,
    "mfa_phone_verify_not_enabled",
    "MFA verification is disabled for Phone",
  ],
  factorPhoneRequired: [400, "validation_failed", "Phone number required to enroll Phone factor"],
  verifiedPhoneFactorExists: [
    422,
    "mfa_verified_factor_exists",
    "A verified phone factor already exists, unenroll the existing factor to continue",
  ],
  phoneCodeInvalid: [422, "mfa_verification_failed", "Invalid MFA Phone code entered"],
  mfaSmsProviderMissing: [500, "unexpected_failure", "Failed to get SMS provider"],
  webauthnEnrollDisabled: [
    422,
    "mfa_webauthn_enroll_not_enabled",
    "MFA enroll is disabled for WebAuthn",
  ],
  factorNameConflict: [422, "mfa_factor_name_conflict", "A factor with this friendly name exists"],
  tooManyFactors: [
    422,
    "too_many_enrolled_mfa_factors",
    "Maximum number of verified factors reached, unenroll to continue",
  ],
  enrollNeedsAal2: [403, "insufficient_aal", "AAL2 required to enroll a new factor"],
  updateNeedsAal2: [
    401,
    "insufficient_aal",
    "AAL2 session is required to update email or password when MFA is enabled.",
  ],
  unenrollNeedsAal2: [422, "insufficient_aal", "AAL2 required to unenroll verified factor"],
  totpVerifyDisabled: [422, "mfa_totp_verify_not_enabled", "MFA verification is disabled for TOTP"],
  totpUriTooLong: [400, "validation_failed", "The TOTP URI is too long for a QR code"],
  codeRequired: [400, "validation_failed", "Code needs to be non-empty"],
  challengeNotFound: [
    422,
    "mfa_factor_not_found",
    "MFA factor with the provided challenge ID not found",
  ],
  challengeIpMismatch: [
    422,
    "mfa_ip_address_mismatch",
    "Challenge and verify IP addresses mismatch.",
  ],
  challengeExpired: [422, "mfa_challenge_expired", "MFA challenge has expired"],
  totpInvalid: [422, "mfa_verification_failed", "Invalid TOTP code entered"],
  // WebAuthn factors (mfa.go); the verify switch answers its disabled check with the enroll code
  webauthnVerifyDisabled: [
    422,
    "mfa_webauthn_enroll_not_enabled",
    "MFA verification is disabled for WebAuthn",
  ],
  webauthnChallengeDisabled: [
    422,
    "mfa_webauthn_verify_not_enabled",
    "MFA verification is disabled for WebAuthn",
  ],
  webauthnParamsRequired: [400, "validation_failed", "WebAuthn config required"],
  webauthnTypeInvalid: [400, "validation_failed", "WebAuthn type must be create or request"],
  credentialResponseRequired: [400, "validation_failed", "credential_response required"],
  credentialResponseInvalid: [400, "validation_failed", "Invalid credential_response"],
  // Recovery codes (recovery_codes.go)
  recoveryCodesEnrollDisabled: [
    422,
    "mfa_recovery_codes_enroll_not_enabled",
    "MFA enroll is disabled for recovery codes",
  ],
  recoveryCodesVerifyDisabled: [
    422,
    "mfa_recovery_codes_verify_not_enabled",
    "MFA verification is disabled for recovery codes",
  ],
  recoveryCodesNotEnrolled: [
    404,
    "mfa_factor_not_found",
    "The user has not enrolled recovery codes",
  ],
  recoveryCodesExist: [
    422,
    "mfa_verified_factor_exists",
    "Recovery codes are already enrolled for this user, use regenerate to rotate them",
  ],
  recoveryCodesSoleFactor: [
    422,
    "mfa_recovery_codes_sole_factor",
    "At least one other verified factor is required to generate recovery codes",
  ],
  recoveryCodesLastFactor: [
    422,
    "mfa_recovery_codes_sole_factor",
    "Recovery codes cannot be the only factor, delete them before unenrolling the last other verified factor",
  ],
  recoveryCodesOwnEndpoint: [
    422,
    "validation_failed",
    "Recovery codes cannot be unenrolled with this endpoint, use DELETE /factors/recovery-codes",
  ],
  recoveryCodeInvalid: [422, "mfa_verification_failed", "Invalid recovery code entered"],
  recoveryCodesLocked: [
    429,
    "mfa_recovery_codes_locked",
    "Too many failed verification attempts, try again later",
  ],
  recoveryCodesGenerateNeedsAal2: [
    403,
    "insufficient_aal",
    "AAL2 required to generate recovery codes",
  ],
  recoveryCodesRegenerateNeedsAal2: [
    403,
    "insufficient_aal",
    "AAL2 required to regenerate recovery codes",
  ],
  recoveryCodesDeleteNeedsAal2: [403, "insufficient_aal", "AAL2 required to delete recovery codes"],
  // Passkeys (passkey_*.go, requirePasskeyEnabled)
  passkeyDisabled: [404, "passkey_disabled", "Passkeys are disabled"],
  tooManyPasskeys: [422, "too_many_passkeys", "Maximum number of passkeys reached"],
  passkeyNeedsAal2: [
    403,
    "insufficient_aal",
    "AAL2 session is required to manage passkeys when MFA is enabled",
  ],
  challengeIdRequired: [400, "validation_failed", "challenge_id is required"],
  credentialRequired: [400, "validation_failed", "credential is required"],
  challengeIdNotUuid: [400, "validation_failed", "challenge_id must be a valid UUID"],
  webauthnChallengeNotFound: [
    400,
    "webauthn_challenge_not_found",
    "Challenge not found or already used",
  ],
  webauthnChallengeExpired: [400, "webauthn_challenge_expired", "Challenge has expired"],
  webauthnCredentialInvalid: [400, "webauthn_verification_failed", "Invalid credential response"],
  webauthnVerificationFailed: [
    400,
    "webauthn_verification_failed",
    "Credential verification failed",
  ],
  webauthnCredentialExists: [
    422,
    "webauthn_credential_exists",
    "This credential is already registered",
  ],
  webauthnNotConfigured: [500, "unexpected_failure", "Failed to initialize WebAuthn"],
  passkeyNotFound: [404, "validation_failed", "Passkey not found"],
  friendlyNameRequired: [400, "validation_failed", "friendly_name is required"],
  friendlyNameTooLong: [400, "validation_failed", "friendly_name must be 120 characters or less"],
  passkeyEmailNotConfirmed: [403, "email_not_confirmed", "Email not confirmed"],
  passkeyUserBanned: [403, "user_banned", "User is banned"],
  // OAuth and identities (external.go, identity.go)
  unsupportedProvider: [400, "validation_failed", "Unsupported provider"],
  oauthStateMissing: [400, "bad_oauth_callback", "OAuth state parameter missing"],
  oauthStateInvalid: [400, "bad_oauth_state", "OAuth callback with invalid state"],
  oauthCodeMissing: [
    400,
    "bad_oauth_callback",
    "OAuth callback with missing authorization code missing",
  ],
  oauthStateUsed: [400, "flow_state_already_used", "State has already been used"],
  providerEmailMissing: [
    500,
    "unexpected_failure",
    "Error getting user email from external provider",
  ],
  providerEmailNeedsVerification: [
    422,
    "provider_email_needs_verification",
    "Unverified email with provider. Verify the email with provider in order to sign in",
  ],
  manualLinkingDisabled: [404, "manual_linking_disabled", "Manual linking is disabled"],
  identityIdNotUuid: [404, "validation_failed", "identity_id must be an UUID"],
  singleIdentity: [
    422,
    "single_identity_not_deletable",
    "User must have at least 1 identity after unlinking",
  ],
  identityNotFound: [422, "identity_not_found", "Identity doesn't exist"],
  identityAlreadyLinked: [422, "identity_already_exists", "Identity is already linked"],
  identityLinkedToAnother: [
    422,
    "identity_already_exists",
    "Identity is already linked to another user",
  ],
  emailConflictIdentity: [
    422,
    "email_conflict_identity_not_deletable",
    "Unable to unlink identity due to email conflict",
  ],
  linkingTargetMissing: [422, "user_not_found", "Linking target user not found"],
  // Phone (phone.go, signup.go, otp.go, user.go, admin.go, token.go)
  invalidPhone: [400, "validation_failed", "Invalid phone number format (E.164 required)"],
  invalidChannel: [
    400,
    "validation_failed",
    "Invalid channel, supported values are 'sms' or 'whatsapp'. 'whatsapp' is only supported if Twilio or Twilio Verify is used as the provider.",
  ],
  phoneSignupDisabled: [400, "phone_provider_disabled", "Phone signups are disabled"],
  phoneLoginsDisabled: [422, "phone_provider_disabled", "Phone logins are disabled"],
  phoneNotConfirmed: [400, "phone_not_confirmed", "Phone not confirmed"],
  phoneExists: [422, "phone_exists", "A user with this phone number has already been registered"],
  phoneExistsAdmin: [422, "phone_exists", "Phone number already registered by another user"],
  otpChannelNeedsPhone: [
    400,
    "validation_failed",
    "Channel should only be specified with Phone OTP",
  ],
  pkcePhoneSignup: [400, "validation_failed", "PKCE not supported for phone signups"],
  smsProviderMissing: [500, "unexpected_failure", "Unable to get SMS provider"],
  // Features a project has off (middleware.go require*Enabled, web3.go, token_oidc.go)
  validationFailed: [400, "validation_failed", "Validation failed"],
  providerDisabled: [400, "provider_disabled", "Provider is not enabled"],
  web3Disabled: [422, "web3_provider_disabled", "Web3 provider is disabled"],
  web3UnsupportedChain: [400, "web3_unsupported_chain", "Unsupported chain"],
  samlDisabled: [404, "saml_provider_disabled", "SAML 2.0 is disabled"],
  ssoProviderNotFound: [404, "sso_provider_not_found", "SSO Identity Provider not found"],
  oauthServerDisabled: [404, "feature_disabled", "OAuth server is disabled"],
  customOAuthDisabled: [404, "feature_disabled", "Custom OAuth providers are disabled"],
  scimDisabled: [404, "feature_disabled", "SCIM server is disabled"],
  // Rate limits (apilimiter, mail.go)
  requestRateLimit: [429, "over_request_rate_limit", "Request rate limit reached"],
  emailRateLimit: [429, "over_email_send_rate_limit", "email rate limit exceeded"],
  smsRateLimit: [429, "over_sms_send_rate_limit", "SMS rate limit exceeded"],
} as const satisfies Record<string, Entry>;

export type ErrorName = keyof typeof TABLE;

/** Builds the named error; `message` overrides the table's text where the real one is formatted. */
export function authError(name: ErrorName, message?: string): AuthError {
  const [status, code, text] = TABLE[name];
  return new AuthError(status, code, message ?? text);
}

export function weakPassword(message: string, reasons: string[]): AuthError {
  return new AuthError(422, "weak_password", message, { reasons });
}

export function rateLimited(
  code: "over_email_send_rate_limit" | "over_request_rate_limit" | "over_sms_send_rate_limit",
  message: string,
) {
  return new AuthError(429, code, message);
}

export function oauthError(error: string, description: string, status = 400): AuthError {
  return new AuthError(status, error, description, { oauth: true });
}

export const API_VERSION_HEADER = "X-Supabase-Api-Version";

/** Whether the caller asked for the 2024-01-01 error shape ({ code, message }). */
export function wantsNewShape(request: Request): boolean {
  const value = request.headers.get(API_VERSION_HEADER);
  if (!value || !/^\d{4}-\d{2}-\d{2}$/.test(value)) return false;
  return value >= "2024-01-01";
}

/**
 * Postgres' refusals of a value a request carried (SQLSTATE class 22, data exception): a NUL in
 * text (22021) or jsonb (22P05), text that is not valid input for its type (22P02), a value longer
 * than its column (22001). The real service answers them with a 500; a request's bad value is the
 * caller's to fix, so here they are a 400. The request's own checks (the JSON body reader, the
 * handlers' validation) catch what they can first: this is the backstop for what they miss.
 */
const INPUT_REFUSALS = new Set(["22021", "22P05", "22P02", "22001"]);

/** The 400 a database error caused by the request's input is, or undefined for any other error. */
export function inputRefusal(error: unknown): AuthError | undefined {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code !== "string" || !INPUT_REFUSALS.has(code)) return undefined;
  return new AuthError(400, "validation_failed", `Invalid input: ${(error as Error).message}`);
}

/** Renders an error in the shape chosen by X-Supabase-Api-Version. Anything unexpected is a 500
 * with a generic message (the cause is logged, never sent). */
export function errorResponse(error: unknown, request: Request): Response {
  if (!(error instanceof AuthError)) {
    const refusal = inputRefusal(error);
    if (!refusal) console.error("[local auth] unexpected error:", error);
    error = refusal ?? new AuthError(500, "unexpected_failure", "Internal Server Error");
  }
  const e = error as AuthError;
  const headers = new Headers({ "Content-Type": "application/json" });
  if (e.oauth) {
    return new Response(JSON.stringify({ error: e.code, error_description: e.message }), {
      status: e.status,
      headers,
    });
  }
  if (!e.uncoded) headers.set("x-sb-error-code", e.code);
  const extra = e.reasons ? { weak_password: { reasons: e.reasons } } : {};
  let body: object;
  if (wantsNewShape(request)) {
    headers.set(API_VERSION_HEADER, "2024-01-01");
    body = { code: e.code, message: e.message, ...extra };
  } else {
    body = { code: e.status, error_code: e.code, msg: e.message, ...extra };
  }
  return new Response(JSON.stringify(body), { status: e.status, headers });
}
