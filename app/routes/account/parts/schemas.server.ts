import { z } from "zod";
import {
  currentPassword,
  email,
  newPassword,
  totpCode,
  webauthnCredential,
} from "../../auth/parts/schemas.server";
import { DISPLAY_NAME_MAX, USERNAME_PATTERN } from "./profile-rules";

/** The account forms' fields, validated once on the server (messages shown beside the fields). */

export const emailChangeSchema = z.object({ email });

/** The reauthentication code emailed when the server asks for one (secure password change). */
const nonce = z
  .string()
  .optional()
  .transform((value) => value?.replace(/[\s-]/g, "") || undefined)
  .pipe(
    z
      .string()
      .regex(/^\d{6,10}$/, "Enter the 6-digit code from the email.")
      .optional(),
  );

export const passwordChangeSchema = z.object({
  currentPassword: currentPassword.pipe(z.string().min(1, "Enter your current password.")),
  password: newPassword,
  nonce,
});

export const factorName = z
  .string()
  .trim()
  .min(1, "Give this authenticator a name, such as the phone it is on.")
  .max(60, "Names can be at most 60 characters.");

const id = (message: string) =>
  z
    .string()
    .trim()
    .pipe(z.uuid({ error: message }));

export const enrollSchema = z.object({ name: factorName });

export const verifyEnrollmentSchema = z.object({
  factorId: id("This setup has expired. Start again."),
  code: totpCode,
  name: z.string().max(60).catch(""),
  secret: z
    .string()
    .max(128)
    .regex(/^[A-Z2-7=]*$/)
    .catch(""),
  uri: z.string().max(1024).catch(""),
  /** The QR code shown again after a wrong code: only ever an SVG data URL (see totpQrCode). */
  qr: z
    .string()
    .max(40_000)
    .regex(/^data:image\/svg\+xml,[^"<>]*$/)
    .catch(""),
});

export const removeFactorSchema = z.object({
  factorId: id("That authenticator doesn't exist."),
});

export const unlinkSchema = z.object({
  identityId: z.string().trim().min(1, "Choose an account to unlink.").max(255),
});

export const profileSchema = z.object({
  username: z
    .string()
    .trim()
    .toLowerCase()
    .refine((value) => value === "" || USERNAME_PATTERN.test(value), {
      error: "Use 3–30 characters: lower-case letters, digits and _.",
    }),
  displayName: z
    .string()
    .trim()
    .max(DISPLAY_NAME_MAX, `Display names can be at most ${DISPLAY_NAME_MAX} characters.`),
});

export const endSessionSchema = z.object({
  sessionId: id("That session doesn't exist (it may have ended already)."),
});

export const passkeyName = z
  .string()
  .trim()
  .min(1, "Give this passkey a name, such as the device it is on.")
  .max(120, "Names can be at most 120 characters.");

export const renamePasskeySchema = z.object({
  passkeyId: id("That passkey doesn't exist."),
  name: passkeyName,
});

export const removePasskeySchema = z.object({
  passkeyId: id("That passkey doesn't exist."),
});

export const passkeyRegistrationSchema = z.object({
  challengeId: z.uuid({ error: "That passkey request is malformed." }),
  credential: webauthnCredential,
});
