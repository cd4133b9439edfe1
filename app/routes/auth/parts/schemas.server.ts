import type { EmailOtpType } from "@supabase/supabase-js";
import { z } from "zod";
import { safeNext } from "../../../lib/safe-redirect";
import { PASSWORD_MAX_BYTES, PASSWORD_MIN_LENGTH } from "./password-rules";

/**
 * The sign-in forms' fields, validated once on the server. The messages are the ones shown
 * beside the fields, so they speak to the person filling the form in.
 */
const EMAIL_MAX = 255;
const encoder = new TextEncoder();
const bytes = (value: string) => encoder.encode(value).length;

export const email = z
  .string()
  .trim()
  .min(1, "Enter your email address.")
  .max(EMAIL_MAX, `Email addresses can be at most ${EMAIL_MAX} characters.`)
  .pipe(z.email({ error: "Enter an email address like name@example.com." }))
  .transform((value) => value.toLowerCase());

/** A password being checked (sign-in): any length the server accepts. */
export const currentPassword = z
  .string()
  .min(1, "Enter your password.")
  .refine((value) => bytes(value) <= PASSWORD_MAX_BYTES, {
    error: `Passwords can be at most ${PASSWORD_MAX_BYTES} bytes long.`,
  });

/** A password being chosen (sign-up, reset): the rules shown under the field. */
export const newPassword = z
  .string()
  .min(1, "Choose a password.")
  .min(PASSWORD_MIN_LENGTH, `Use at least ${PASSWORD_MIN_LENGTH} characters.`)
  .refine((value) => bytes(value) <= PASSWORD_MAX_BYTES, {
    error: `Passwords can be at most ${PASSWORD_MAX_BYTES} bytes long.`,
  });

export const displayName = z
  .string()
  .trim()
  .max(100, "Display names can be at most 100 characters.")
  .optional()
  .transform((value) => value || undefined);

/** The emailed one-time code; spaces and dashes from pasting are ignored. */
export const code = z
  .string()
  .transform((value) => value.replace(/[\s-]/g, ""))
  .pipe(
    z
      .string()
      .min(1, "Enter the code from the email.")
      .regex(/^\d{6,10}$/, "Enter the 6-digit code from the email."),
  );

/** Where to go afterwards: made safe here, as it enters (a SafePath, or undefined). */
export const next = z.unknown().optional().transform(safeNext);

/** A 6-digit code from an authenticator app; spaces from copying are ignored. */
export const totpCode = z
  .string()
  .transform((value) => value.replace(/[\s-]/g, ""))
  .pipe(
    z
      .string()
      .min(1, "Enter the 6-digit code from your authenticator app.")
      .regex(/^\d{6}$/, "Codes from authenticator apps have 6 digits."),
  );

export const signInSchema = z.object({ email, password: currentPassword, next });
export const emailOnlySchema = z.object({ email, next });
export const signUpSchema = z.object({ email, password: newPassword, displayName, next });
export const codeSchema = z.object({ email, code, next });
export const newPasswordSchema = z.object({ password: newPassword });

/** The `type`s an emailed token-hash link (`/auth/confirm`) can carry, as verifyOtp takes them. */
export const EMAIL_LINK_TYPES = [
  "signup",
  "invite",
  "magiclink",
  "recovery",
  "email_change",
  "email",
] as const satisfies readonly EmailOtpType[];

export type EmailLinkType = (typeof EMAIL_LINK_TYPES)[number];

/** An emailed token-hash link's parameters: in its URL (GET) and in the confirm form (POST). */
export const emailLinkSchema = z.object({
  token_hash: z.string().min(1).max(512),
  type: z.enum(EMAIL_LINK_TYPES),
  next,
});

/** The second-factor challenge after signing in (/mfa). */
export const challengeSchema = z.object({
  factorId: z.string().max(64).optional().catch(undefined),
  code: totpCode,
  next,
});

/** A credential from navigator.credentials, as JSON (an object with an id and a response). */
export const webauthnCredential = z
  .string()
  .max(24_000)
  .transform((value, ctx) => {
    try {
      const parsed = JSON.parse(value);
      if (parsed && typeof parsed === "object" && typeof parsed.id === "string" && parsed.response)
        return parsed as Record<string, unknown>;
    } catch {}
    ctx.addIssue({ code: "custom", message: "That passkey answer is malformed." });
    return z.NEVER;
  });

export const passkeySignInSchema = z.object({
  challengeId: z.uuid({ error: "That passkey request is malformed." }),
  credential: webauthnCredential,
  next,
});

/** A recovery code as typed: letters and digits, spaces and dashes ignored (the server's rule). */
export const recoveryCodeSchema = z.object({
  recoveryCode: z
    .string()
    .trim()
    .min(1, "Enter one of your recovery codes.")
    .max(64, "That is not a recovery code.")
    .regex(/^[A-Za-z0-9\s-]+$/, "Recovery codes have only letters and digits."),
  next,
});
