import { Hono } from "hono";

/** A message the auth server "sent". Kept in memory: the inbox starts empty on every start. */
export interface Message {
  id: string;
  /** The sender Auth writes from: [local_smtp] sender_name and admin_email. */
  from: { name: string; address: string };
  to: string;
  subject: string;
  html: string;
  /** confirmation | invite | magic_link | recovery | email_change | reauthentication */
  type: string;
  /** Every href in the HTML, in order. */
  links: string[];
  /** The one-time code ({{ .Token }}), when the template carries one. */
  token?: string;
  /** The hashed token ({{ .TokenHash }}) for /auth/confirm-style links. */
  tokenHash?: string;
  redirectTo?: string;
  createdAt: string;
}

export class Inbox {
  #messages: Message[] = [];
  #listeners = new Set<(m: Message) => void>();

  deliver(message: Omit<Message, "id" | "createdAt" | "links">): Message {
    const full: Message = {
      ...message,
      id: crypto.randomUUID(),
      createdAt: new Date().toISOString(),
      links: [...message.html.matchAll(/href="([^"]+)"/g)].map((m) => unescapeHtml(m[1] ?? "")),
    };
    this.#messages.push(full);
    for (const listener of this.#listeners) listener(full);
    return full;
  }

  /** Newest first; `to` filters by recipient (case-insensitive). */
  list(to?: string): Message[] {
    const want = to?.toLowerCase();
    return this.#messages.filter((m) => !want || m.to.toLowerCase() === want).reverse();
  }

  get(id: string): Message | undefined {
    return this.#messages.find((m) => m.id === id);
  }

  /** Deletes the messages with these ids; returns how many there were. */
  remove(ids: string[]): number {
    const gone = new Set(ids);
    const before = this.#messages.length;
    this.#messages = this.#messages.filter((m) => !gone.has(m.id));
    return before - this.#messages.length;
  }

  clear(to?: string): number {
    const before = this.#messages.length;
    const want = to?.toLowerCase();
    this.#messages = want ? this.#messages.filter((m) => m.to.toLowerCase() !== want) : [];
    return before - this.#messages.length;
  }
}

/**
 * The inbox over HTTP, mounted at /inbox:
 *   GET    /inbox                         HTML page: every message, its links and codes
 *   GET    /inbox/messages/:id            one message's HTML, as the recipient would see it
 *   GET    /inbox/api/messages?to=EMAIL   JSON { messages: Message[] } newest first
 *   GET    /inbox/api/messages/:id        JSON Message (404 { error } when unknown)
 *   DELETE /inbox/api/messages?to=EMAIL   JSON { deleted: n } (all messages without `to`)
 */
export function inboxRoutes(inbox: Inbox): Hono {
  const app = new Hono();
  app.get("/api/messages", (c) => c.json({ messages: inbox.list(c.req.query("to")) }));
  app.get("/api/messages/:id", (c) => {
    const message = inbox.get(c.req.param("id"));
    return message ? c.json(message) : c.json({ error: "message not found" }, 404);
  });
  app.delete("/api/messages", (c) => c.json({ deleted: inbox.clear(c.req.query("to")) }));
  app.get("/messages/:id", (c) => {
    const message = inbox.get(c.req.param("id"));
    if (!message) return c.text("Message not found", 404);
    return c.html(message.html);
  });
  app.get("/", (c) => c.html(page(inbox.list(c.req.query("to")))));
  return app;
}

function page(messages: Message[]): string {
  const rows = messages
    .map(
      (m) => `<article>
  <h2>${escapeHtml(m.subject)}</h2>
  <p class="meta">To <b>${escapeHtml(m.to)}</b> · ${escapeHtml(m.type)} · ${escapeHtml(m.createdAt)} · <a href="/inbox/messages/${m.id}">view message</a></p>
  ${m.token ? `<p>Code: <code class="code">${escapeHtml(m.token)}</code></p>` : ""}
  <ul>${m.links.map((l) => `<li><a href="${escapeHtml(l)}">${escapeHtml(l)}</a></li>`).join("")}</ul>
</article>`,
    )
    .join("\n");
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Local inbox</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<link rel="icon" href="data:,">
<style>body{font:15px/1.5 system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem}
article{border:1px solid #ccc;border-radius:8px;padding:0 1rem;margin:1rem 0}.meta{color:#555}
.code{font-size:1.4rem;letter-spacing:.15em}a{word-break:break-all}</style></head>
<body><h1>Local inbox</h1>
<p>Every email the local auth server would have sent lands here instead (nothing leaves this machine).
Newest first. Filter with <code>?to=address</code>; JSON at <a href="/inbox/api/messages">/inbox/api/messages</a>.</p>
${rows || "<p>No messages yet.</p>"}
</body></html>`;
}

export function escapeHtml(s: string): string {
  return s.replace(/[&<>"']/g, (ch) => `&#${ch.charCodeAt(0)};`);
}

function unescapeHtml(s: string): string {
  return s.replace(/&amp;/g, "&").replace(/&#(\d+);/g, (_, n) => String.fromCharCode(Number(n)));
}
