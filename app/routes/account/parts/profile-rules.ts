/**
 * The limits the database enforces on profiles (CHECK constraints in supabase/migrations), shared
 * by the server's validation and the profile form's hints.
 */
export const USERNAME_PATTERN = /^[a-z0-9_]{3,30}$/;
export const DISPLAY_NAME_MAX = 100;

export const USERNAME_RULES = "3–30 characters: lower-case letters, digits and _.";
