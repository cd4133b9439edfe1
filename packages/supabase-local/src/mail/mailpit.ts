import { Hono } from "hono";
import type { Inbox, Message } from "./inbox.ts";

/**
 * The inbox as Mailpit's REST API (the mail catcher `supabase start` runs on [local_smtp] port,
 * 54324), for the `mailpit-api` client and the usual Playwright helpers. Served at the root of
 * that port and under /inbox on the API's port (a client with base URL `<api>/inbox` works too).
 *
 *   GET    /api/v1/info                      totals
 *   GET    /api/v1/messages?start&limit      summaries, newest first
 *   DELETE /api/v1/messages {IDs}            those messages; all without IDs
 *   PUT    /api/v1/messages {IDs?,Read}      mark read or unread
 *   GET    /api/v1/search?query&start&limit  the same, filtered (to:, from:, subject:, tag:, is:read…)
 *   DELETE /api/v1/search?query              the messages the query finds
 *   GET    /api/v1/message/{ID|latest}       one message (Text, HTML, …); marks it read
 *   GET    /api/v1/message/{ID}/headers      its headers
 *   GET    /api/v1/message/{ID}/raw          its source (RFC 5322)
 *   GET    /view/{ID|latest}.html|.txt|.raw   its HTML, text, source
 *
 * Each message has the template's name as its tag (`magic_link`, `recovery`…). The local extras
 * the /inbox page shows (the code, the token hash, redirect_to) travel as X-Local-* headers.
 */
export function mailpitRoutes(inbox: Inbox): Hono {
  const read = new Set<string>();
  const app = new Hono();
  const isRead = (m: Message) => read.has(m.id);

  const listing = (messages: Message[], start: number, limit: number) => {
    const all = inbox.list();
    const page = messages.slice(start, start + limit);
    return {
      total: all.length,
      unread: all.filter((m) => !isRead(m)).length,
      count: page.length,
      messages_count: messages.length,
      messages_unread: messages.filter((m) => !isRead(m)).length,
      start,
      tags: [...new Set(all.map((m) => m.type))].sort(),
      messages: page.map((m) => summary(m, isRead(m))),
    };
  };
  const find = (id: string) => (id === "latest" ? inbox.list()[0] : inbox.get(id));
  const paging = (q: (name: string) => string | undefined) => ({
    start: Math.max(0, Number.parseInt(q("start") ?? "0", 10) || 0),
    limit: Math.max(1, Number.parseInt(q("limit") ?? "50", 10) || 50),
  });

  app.get("/api/v1/info", (c) => {
    const all = inbox.list();
    return c.json({
      Version: "local",
      LatestVersion: "",
      Database: "memory",
      DatabaseSize: 0,
      Messages: all.length,
      Unread: all.filter((m) => !isRead(m)).length,
      Tags: Object.fromEntries(
        [...new Set(all.map((m) => m.type))].map((t) => [
          t,
          all.filter((m) => m.type === t).length,
        ]),
      ),
      RuntimeStats: { Uptime: Math.round(process.uptime()) },
    });
  });
  app.get("/api/v1/messages", (c) => {
    const { start, limit } = paging((n) => c.req.query(n));
    return c.json(listing(inbox.list(), start, limit));
  });
  app.delete("/api/v1/messages", async (c) => {
    const body = await jsonBody(c.req.raw);
    if (body === undefined) return c.text("invalid JSON body", 400);
    const ids = idsOf(body);
    if (ids === undefined) inbox.clear();
    else inbox.remove(ids);
    return c.text("ok");
  });
  app.put("/api/v1/messages", async (c) => {
    const body = await jsonBody(c.req.raw);
    if (body === undefined) return c.text("invalid JSON body", 400);
    const wanted = (body as { Read?: unknown }).Read === true;
    const ids = idsOf(body);
    const search = (body as { Search?: unknown }).Search;
    const targets =
      ids ??
      (typeof search === "string" ? filter(inbox.list(), search, isRead) : inbox.list()).map(
        (m) => m.id,
      );
    for (const id of targets) {
      if (wanted) read.add(id);
      else read.delete(id);
    }
    return c.text("ok");
  });
  app.get("/api/v1/search", (c) => {
    const query = c.req.query("query");
    if (!query) return c.text("no search query", 400);
    const { start, limit } = paging((n) => c.req.query(n));
    return c.json(listing(filter(inbox.list(), query, isRead), start, limit));
  });
  app.delete("/api/v1/search", (c) => {
    const query = c.req.query("query");
    if (!query) return c.text("no search query", 400);
    inbox.remove(filter(inbox.list(), query, isRead).map((m) => m.id));
    return c.text("ok");
  });
  app.get("/api/v1/message/:id", (c) => {
    const message = find(c.req.param("id"));
    if (!message) return c.text("message not found", 404);
    read.add(message.id);
    return c.json(full(message));
  });
  app.get("/api/v1/message/:id/headers", (c) => {
    const message = find(c.req.param("id"));
    if (!message) return c.text("message not found", 404);
    return c.json(Object.fromEntries(headers(message).map(([k, v]) => [k, [v]])));
  });
  app.get("/api/v1/message/:id/raw", (c) => {
    const message = find(c.req.param("id"));
    if (!message) return c.text("message not found", 404);
    return c.text(source(message));
  });
  app.get("/view/:file{[^/]+\\.(?:html|txt|raw)}", (c) => {
    const file = c.req.param("file");
    const dot = file.lastIndexOf(".");
    const message = find(file.slice(0, dot));
    if (!message) return c.text("message not found", 404);
    const kind = file.slice(dot + 1);
    if (kind === "html") return c.html(message.html);
    return c.text(kind === "txt" ? textOf(message.html) : source(message));
  });
  return app;
}

/** The sender as Mailpit reports an address. */
function sender(m: Message) {
  return { Name: m.from.name, Address: m.from.address };
}

/** The From header as Go's net/mail writes Auth's: `"Name" <address>`, or `<address>`. */
function fromHeader(m: Message): string {
  return m.from.name ? `${JSON.stringify(m.from.name)} <${m.from.address}>` : `<${m.from.address}>`;
}

function address(email: string) {
  return { Name: "", Address: email };
}

function summary(m: Message, isRead: boolean) {
  const text = textOf(m.html);
  return {
    ID: m.id,
    MessageID: messageId(m),
    Read: isRead,
    From: sender(m),
    To: [address(m.to)],
    Cc: [],
    Bcc: [],
    ReplyTo: [],
    Subject: m.subject,
    Created: m.createdAt,
    Username: "",
    Tags: [m.type],
    Size: Buffer.byteLength(source(m)),
    Attachments: 0,
    Snippet: text.slice(0, 250),
  };
}

function full(m: Message) {
  return {
    ID: m.id,
    MessageID: messageId(m),
    From: sender(m),
    To: [address(m.to)],
    Cc: [],
    Bcc: [],
    ReplyTo: [],
    ReturnPath: m.from.address,
    Subject: m.subject,
    ListUnsubscribe: { Header: "", Links: [], Errors: "", HeaderPost: "" },
    Date: m.createdAt,
    Tags: [m.type],
    Username: "",
    Text: textOf(m.html),
    HTML: m.html,
    Size: Buffer.byteLength(source(m)),
    Inline: [],
    Attachments: [],
  };
}

function messageId(m: Message): string {
  return `${m.id}@localhost`;
}

function headers(m: Message): Array<[string, string]> {
  const list: Array<[string, string]> = [
    ["From", fromHeader(m)],
    ["To", m.to],
    ["Subject", m.subject],
    ["Date", new Date(m.createdAt).toUTCString()],
    ["Message-Id", `<${messageId(m)}>`],
    ["Mime-Version", "1.0"],
    ["Content-Type", 'text/html; charset="UTF-8"'],
    ["X-Tags", m.type],
  ];
  // what only the local backend knows (the /inbox page shows it too)
  if (m.token) list.push(["X-Local-Token", m.token]);
  if (m.tokenHash) list.push(["X-Local-Token-Hash", m.tokenHash]);
  if (m.redirectTo) list.push(["X-Local-Redirect-To", m.redirectTo]);
  return list;
}

function source(m: Message): string {
  return `${headers(m)
    .map(([k, v]) => `${k}: ${v}`)
    .join("\r\n")}\r\n\r\n${m.html}`;
}

/** The HTML as text: links kept as "label (url)", tags dropped, entities decoded. */
export function textOf(html: string): string {
  return html
    .replace(/<(script|style|head)\b[\s\S]*?<\/\1>/gi, "")
    .replace(/<a\b[^>]*href="([^"]*)"[^>]*>([\s\S]*?)<\/a>/gi, (_, href, label) => {
      const text = label.replace(/<[^>]+>/g, "").trim();
      return text && text !== href ? `${text} (${href})` : href;
    })
    .replace(/<(?:br|\/p|\/h\d|\/li|\/div)\b[^>]*>/gi, "\n")
    .replace(/<[^>]+>/g, "")
    .replace(/&(amp|lt|gt|quot|#39|#(\d+));/g, (_, name: string, code?: string) =>
      code
        ? String.fromCharCode(Number(code))
        : ({ amp: "&", lt: "<", gt: ">", quot: '"', "#39": "'" }[name] ?? ""),
    )
    .split("\n")
    .map((line) => line.replace(/[ \t]+/g, " ").trim())
    .filter(Boolean)
    .join("\n");
}

/**
 * Mailpit's search: space-separated terms, each `field:value` (to, from, subject, tag, message-id)
 * or `is:read` / `is:unread`, or a word looked for in the subject and text; `"quoted values"`;
 * a leading `-` or `!` negates. Matching is case-insensitive and by substring, as Mailpit's.
 */
export function filter(
  messages: Message[],
  query: string,
  isRead: (m: Message) => boolean,
): Message[] {
  const terms = [...query.matchAll(/([-!]?)(?:([a-z-]+):)?(?:"([^"]*)"|(\S+))/gi)].map((m) => ({
    not: m[1] !== "",
    field: (m[2] ?? "").toLowerCase(),
    value: (m[3] ?? m[4] ?? "").toLowerCase(),
  }));
  return messages.filter((message) =>
    terms.every((term) => matches(message, term.field, term.value, isRead) !== term.not),
  );
}

function matches(
  m: Message,
  field: string,
  value: string,
  isRead: (m: Message) => boolean,
): boolean {
  const has = (s: string) => s.toLowerCase().includes(value);
  switch (field) {
    case "to":
      return has(m.to);
    case "from":
      return has(fromHeader(m));
    case "subject":
      return has(m.subject);
    case "tag":
      return m.type.toLowerCase() === value;
    case "message-id":
      return has(messageId(m));
    case "is":
      return value === "read" ? isRead(m) : value === "unread" ? !isRead(m) : false;
    case "":
      return has(m.subject) || has(textOf(m.html)) || has(m.to);
    default:
      return false;
  }
}

function idsOf(body: unknown): string[] | undefined {
  const ids = (body as { IDs?: unknown } | null)?.IDs;
  return Array.isArray(ids) && ids.length > 0 ? ids.map(String) : undefined;
}

/** The request's JSON body (null when empty); undefined when it is not JSON. */
async function jsonBody(request: Request): Promise<unknown> {
  const text = await request.text();
  if (!text.trim()) return null;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}
