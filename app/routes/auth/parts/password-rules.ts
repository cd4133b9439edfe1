/**
 * The password rules the sign-up and reset forms show before submit and the server enforces.
 * MIN_LENGTH mirrors `[auth] minimum_password_length` in supabase/config.toml; the auth server
 * may be stricter (hosted projects can require character classes) and its `weak_password`
 * reasons are shown beside the field too. 72 bytes is bcrypt's limit, which the server enforces.
 */
export const PASSWORD_MIN_LENGTH = 8;
export const PASSWORD_MAX_BYTES = 72;

export const PASSWORD_RULES = `At least ${PASSWORD_MIN_LENGTH} characters (at most ${PASSWORD_MAX_BYTES} bytes).`;
