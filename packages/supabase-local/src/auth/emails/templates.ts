import { readFileSync } from "node:fs";
import { isAbsolute, join } from "node:path";
import { escapeHtml } from "../../mail/inbox.ts";
import type { AuthContext } from "../context.ts";

/** Template names as in config.toml [auth.email.template.<name>]. */
export type MailType =
  | "confirmation"
  | "invite"
  | "magic_link"
  | "recovery"
  | "email_change"
  | "reauthentication"
  | `${NotificationKind}_notification`;

/** Security notifications as in config.toml [auth.email.notification.<kind>]. */
export type NotificationKind =
  | "password_changed"
  | "email_changed"
  | "phone_changed"
  | "identity_linked"
  | "identity_unlinked"
  | "mfa_factor_enrolled"
  | "mfa_factor_unenrolled";

/** The real service's default subjects and bodies (internal/mailer/templatemailer). They carry
 * no code except reauthentication's; the inbox shows every message's code beside it anyway. */
const DEFAULTS: Record<MailType, { subject: string; body: string }> = {
  invite: {
    subject: "You've been invited",
    body: `<h2>You've been invited</h2>

<p>You've been invited to create an account. Follow the link below to accept.</p>
<p><a href="{{ .ConfirmationURL }}">Accept invitation</a></p>`,
  },
  confirmation: {
    subject: "Confirm your email address",
    body: `<h2>Confirm your email address</h2>

<p>Follow the link below to confirm this email address and finish signing up.</p>
<p><a href="{{ .ConfirmationURL }}">Confirm email address</a></p>
`,
  },
  recovery: {
    subject: "Reset your password",
    body: `<h2>Reset your password</h2>

<p>We received a request to reset your password. Follow the link below to choose a new one.</p>
<p><a href="{{ .ConfirmationURL }}">Reset password</a></p>
<p>If you didn't request this, you can safely ignore this email.</p>`,
  },
  magic_link: {
    subject: "Your sign-in link",
    body: `<h2>Your sign-in link</h2>

<p>Follow the link below to sign in. This link expires shortly and can only be used once.</p>
<p><a href="{{ .ConfirmationURL }}">Sign in</a></p>`,
  },
  email_change: {
    subject: "Confirm your new email address",
    body: `<h2>Confirm your new email address</h2>

<p>Follow the link below to confirm {{ .NewEmail }} as your new email address.</p>
<p><a href="{{ .ConfirmationURL }}">Confirm new email address</a></p>
<p>If you didn't request this change, you can safely ignore this email.</p>`,
  },
  reauthentication: {
    subject: "{{ .Token }} is your verification code",
    body: `<h2>Your verification code</h2>

<p>Use the code below to verify your identity. It expires shortly.</p>
<p>{{ .Token }}</p>`,
  },
  password_changed_notification: {
    subject: "Your password was changed",
    body: `<h2>Your password was changed</h2>

<p>The password for your account was recently changed.</p>
<p>If you didn't make this change, reset your password and contact support immediately.</p>
`,
  },
  email_changed_notification: {
    subject: "Your email address was changed",
    body: `<h2>Your email address was changed</h2>

<p>The email address for your account was changed from {{ .OldEmail }} to {{ .Email }}.</p>
<p>If you didn't make this change, contact support immediately.</p>
`,
  },
  phone_changed_notification: {
    subject: "Your phone number was changed",
    body: `<h2>Your phone number was changed</h2>

<p>The phone number for your account was changed from {{ .OldPhone }} to {{ .Phone }}.</p>
<p>If you didn't make this change, contact support immediately.</p>
`,
  },
  identity_linked_notification: {
    subject: "A new sign-in method was linked to your account",
    body: `<h2>A new sign-in method was linked</h2>

<p>Your {{ .Provider }} account was linked as a new sign-in method for {{ .Email }}.</p>
<p>If you didn't make this change, contact support immediately.</p>
`,
  },
  identity_unlinked_notification: {
    subject: "A sign-in method was removed from your account",
    body: `<h2>A sign-in method was removed</h2>

<p>Your {{ .Provider }} account was removed as a sign-in method for {{ .Email }}.</p>
<p>If you didn't make this change, contact support immediately.</p>
`,
  },
  mfa_factor_enrolled_notification: {
    subject: "A new verification method was added to your account",
    body: `<h2>A new verification method was added</h2>

<p>Sign-in verification method {{ .FactorType }} was added to your account.</p>
<p>If you didn't make this change, contact support immediately.</p>
`,
  },
  mfa_factor_unenrolled_notification: {
    subject: "A verification method was removed from your account",
    body: `<h2>A verification method was removed</h2>

<p>Sign-in verification method {{ .FactorType }} was removed from your account.</p>
<p>If you didn't make this change, contact support immediately.</p>
`,
  },
};

export interface Mail {
  type: MailType;
  to: string;
  /** The code ({{ .Token }}). */
  token: string;
  /** The stored hash ({{ .TokenHash }}), with pkce_ prefix in PKCE flows. */
  tokenHash?: string;
  /** The /verify type in the link: signup, invite, magiclink, recovery, email_change. */
  verifyType?: string;
  redirectTo: string;
  email?: string;
  newEmail?: string;
  /** Notifications: the address before a change, the provider linked or unlinked, the factor type. */
  oldEmail?: string;
  provider?: string;
  factorType?: string;
  data?: Record<string, unknown>;
}

/** [auth.email.template.<type>], or for a notification [auth.email.notification.<kind>]. */
function configured(ctx: AuthContext, type: MailType) {
  const kind = type.endsWith("_notification") ? type.slice(0, -"_notification".length) : undefined;
  return kind ? ctx.config.auth.email.notifications[kind] : ctx.config.auth.email.templates[type];
}

/** "Sends" an email: renders the configured (or default) template into the local inbox. */
export function sendMail(ctx: AuthContext, mail: Mail): { actionLink?: string } {
  const template = configured(ctx, mail.type);
  const subject = template?.subject ?? DEFAULTS[mail.type].subject;
  const body = template?.contentPath
    ? readTemplate(ctx.projectDir, template.contentPath)
    : DEFAULTS[mail.type].body;
  const actionLink =
    mail.tokenHash && mail.verifyType
      ? verifyUrl(ctx, mail.tokenHash, mail.verifyType, mail.redirectTo)
      : undefined;
  const values: Record<string, string> = {
    ConfirmationURL: actionLink ?? "",
    Token: mail.token,
    TokenHash: mail.tokenHash ?? "",
    SiteURL: ctx.config.auth.siteUrl,
    RedirectTo: mail.redirectTo,
    Email: mail.email ?? mail.to,
    NewEmail: mail.newEmail ?? "",
    OldEmail: mail.oldEmail ?? "",
    Provider: mail.provider ?? "",
    FactorType: mail.factorType ?? "",
  };
  // Bodies are HTML (values escaped, as Go's html/template does); the subject is plain text.
  const render = (text: string, escape: (s: string) => string = escapeHtml) =>
    text.replace(/\{\{\s*\.(\w+)(?:\.(\w+))?\s*\}\}/g, (_, name: string, key?: string) => {
      if (name === "Data" && key) return escape(String(mail.data?.[key] ?? ""));
      return escape(values[name] ?? "");
    });
  const html = render(body);
  ctx.inbox.deliver({
    from: { name: ctx.config.localSmtp.senderName, address: ctx.config.localSmtp.adminEmail },
    to: mail.to,
    subject: render(subject, (s) => s),
    html,
    type: mail.type,
    token: mail.token || undefined,
    tokenHash: mail.tokenHash,
    redirectTo: mail.redirectTo,
  });
  return { actionLink };
}

/** The link the real templates carry: {API_EXTERNAL_URL}/verify?token=…&type=…&redirect_to=… */
export function verifyUrl(
  ctx: AuthContext,
  tokenHash: string,
  type: string,
  redirectTo: string,
): string {
  const url = new URL(`${ctx.externalUrl()}/verify`);
  url.searchParams.set("token", tokenHash);
  url.searchParams.set("type", type);
  url.searchParams.set("redirect_to", redirectTo);
  return url.toString();
}

function readTemplate(projectDir: string, path: string): string {
  return readFileSync(isAbsolute(path) ? path : join(projectDir, path), "utf8");
}
