import { readFileSync } from "node:fs";
import { isAbsolute, join } from "node:path";
import { escapeHtml } from "../inbox.ts";
import { ROOT } from "../paths.ts";
import type { AuthContext } from "./context.ts";

/** Template names as in config.toml [auth.email.template.<name>]. */
export type MailType =
  | "confirmation"
  | "invite"
  | "magic_link"
  | "recovery"
  | "email_change"
  | "reauthentication";

/** The real service's default subjects and bodies (internal/mailer). */
const DEFAULTS: Record<MailType, { subject: string; body: string }> = {
  confirmation: {
    subject: "Confirm Your Email",
    body: `<h2>Confirm your email</h2>
<p>Follow this link to confirm your email:</p>
<p><a href="{{ .ConfirmationURL }}">Confirm your email address</a></p>
<p>Alternatively, enter the code: {{ .Token }}</p>`,
  },
  invite: {
    subject: "You have been invited",
    body: `<h2>You have been invited</h2>
<p>You have been invited to create a user on {{ .SiteURL }}. Follow this link to accept the invite:</p>
<p><a href="{{ .ConfirmationURL }}">Accept the invite</a></p>
<p>Alternatively, enter the code: {{ .Token }}</p>`,
  },
  magic_link: {
    subject: "Your Magic Link",
    body: `<h2>Magic Link</h2>
<p>Follow this link to login:</p>
<p><a href="{{ .ConfirmationURL }}">Log In</a></p>
<p>Alternatively, enter the code: {{ .Token }}</p>`,
  },
  recovery: {
    subject: "Reset Your Password",
    body: `<h2>Reset Password</h2>
<p>Follow this link to reset the password for your user:</p>
<p><a href="{{ .ConfirmationURL }}">Reset Password</a></p>
<p>Alternatively, enter the code: {{ .Token }}</p>`,
  },
  email_change: {
    subject: "Confirm Email Change",
    body: `<h2>Confirm email address change</h2>
<p>Follow this link to confirm the update of your email address from {{ .Email }} to {{ .NewEmail }}:</p>
<p><a href="{{ .ConfirmationURL }}">Change email address</a></p>
<p>Alternatively, enter the code: {{ .Token }}</p>`,
  },
  reauthentication: {
    subject: "Confirm reauthentication",
    body: `<h2>Confirm reauthentication</h2>
<p>Enter the code: {{ .Token }}</p>`,
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
  data?: Record<string, unknown>;
}

/** "Sends" an email: renders the configured (or default) template into the local inbox. */
export function sendMail(ctx: AuthContext, mail: Mail): { actionLink?: string } {
  const template = ctx.config.auth.email.templates[mail.type];
  const subject = template?.subject ?? DEFAULTS[mail.type].subject;
  const body = template?.contentPath
    ? readTemplate(template.contentPath)
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
  };
  const html = body.replace(
    /\{\{\s*\.(\w+)(?:\.(\w+))?\s*\}\}/g,
    (_, name: string, key?: string) => {
      if (name === "Data" && key) return escapeHtml(String(mail.data?.[key] ?? ""));
      return escapeHtml(values[name] ?? "");
    },
  );
  ctx.inbox.deliver({
    to: mail.to,
    subject,
    html,
    type: mail.type,
    token: mail.token,
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

function readTemplate(path: string): string {
  return readFileSync(isAbsolute(path) ? path : join(ROOT, path), "utf8");
}
