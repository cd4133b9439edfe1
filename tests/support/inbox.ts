// The test backend's mail, read through Mailpit's API with the `mailpit-api` client, as a project's
// tests read the CLI's Mailpit. The local backend serves that API under /inbox on its own port (and
// on [local_smtp] port for `npm run local`), so the shared test backend needs no port of its own.
// What only the local backend knows (the code, the token hash, redirect_to) comes from its
// X-Local-* headers; the template's name is the message's tag.
import type { InboxMessage } from "@edge-notes/supabase-local";
import { MailpitClient } from "mailpit-api";
import { BACKEND_URL } from "./backend.ts";

export type { InboxMessage };

export const mailpit = new MailpitClient(`${BACKEND_URL}/inbox`);

/** Messages sent to `to`, newest first. */
export async function messagesFor(to: string): Promise<InboxMessage[]> {
  const found = await mailpit.searchMessages({ query: `to:"${to}"`, limit: 1000 });
  const mine = found.messages.filter((m) =>
    m.To.some((a) => a.Address.toLowerCase() === to.toLowerCase()),
  );
  return Promise.all(mine.map((m) => read(m.ID)));
}

/** The newest message to `to` (optionally of one type); fails when there is none. */
export async function latestMessage(to: string, type?: string): Promise<InboxMessage> {
  const message = (await messagesFor(to)).find((m) => !type || m.type === type);
  if (!message) throw new Error(`no ${type ?? ""} message for ${to}`);
  return message;
}

/**
 * The link in a message to the app's /auth/confirm (the project's templates, supabase/templates:
 * token hash, type and sometimes next). Its origin is the backend's site_url.
 */
export function confirmLink(message: InboxMessage): URL {
  const link = message.links.find((l) => new URL(l).pathname === "/auth/confirm");
  if (!link) throw new Error(`no /auth/confirm link in: ${message.links.join(", ")}`);
  return new URL(link);
}

/** The auth server's /verify type of each template's link. */
const VERIFY_TYPES: Record<string, string> = {
  confirmation: "signup",
  invite: "invite",
  magic_link: "magiclink",
  recovery: "recovery",
  email_change: "email_change",
};

/**
 * The link the default templates would carry for this message ({{ .ConfirmationURL }}: the auth
 * server's GET /verify with its token hash, type and redirect_to), for tests of /verify itself and
 * of /auth/callback, which a project without this one's templates sends people through. This
 * project's emails link to /auth/confirm instead (confirmLink).
 */
export function defaultTemplateLink(
  message: Pick<InboxMessage, "type" | "tokenHash" | "redirectTo">,
  backendUrl = BACKEND_URL,
): string {
  const type = VERIFY_TYPES[message.type];
  if (!type || !message.tokenHash) throw new Error(`no link in a ${message.type} message`);
  const url = new URL(`${backendUrl}/auth/v1/verify`);
  url.searchParams.set("token", message.tokenHash);
  url.searchParams.set("type", type);
  url.searchParams.set("redirect_to", message.redirectTo ?? "");
  return url.toString();
}

async function read(id: string): Promise<InboxMessage> {
  const [message, headers] = await Promise.all([
    mailpit.getMessageSummary(id),
    mailpit.getMessageHeaders(id),
  ]);
  const header = (name: string) => headers[name]?.[0];
  return {
    id: message.ID,
    from: { name: message.From?.Name ?? "", address: message.From?.Address ?? "" },
    to: message.To[0]?.Address ?? "",
    subject: message.Subject,
    html: message.HTML,
    type: message.Tags[0] ?? "",
    links: [...message.HTML.matchAll(/href="([^"]+)"/g)].map((m) => unescapeHtml(m[1] ?? "")),
    token: header("X-Local-Token"),
    tokenHash: header("X-Local-Token-Hash"),
    redirectTo: header("X-Local-Redirect-To"),
    createdAt: message.Date,
  };
}

function unescapeHtml(s: string): string {
  return s.replace(/&amp;/g, "&").replace(/&#(\d+);/g, (_, n) => String.fromCharCode(Number(n)));
}
