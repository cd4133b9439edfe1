// The inbox as Mailpit's API (src/mail/mailpit.ts), driven by the `mailpit-api` client as a
// project's tests drive the CLI's Mailpit on 54324: list, read (JSON, HTML, text, source), search
// by recipient, delete some, by search, and all. A backend of its own (its inbox is emptied here),
// with the Mailpit port on a test port, never the default.

import { fileURLToPath } from "node:url";
import { createClient } from "@supabase/supabase-js";
import { MailpitClient } from "mailpit-api";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { QUICK_PASSWORD_HASH_COST } from "../../../../tests/support/backend.ts";
import { workerDatabase } from "../../../../tests/support/memory-backend.ts";
import { createLocalBackend, KEYS, type LocalBackend } from "../../src/index.ts";

const ROOT = fileURLToPath(new URL("../../../../", import.meta.url));
// Free ports from the OS unless set: a fixed one in the ephemeral range can be taken by any socket.
const API_PORT = Number(process.env.TEST_MAILPIT_API_PORT ?? 0);
const MAILPIT_PORT = Number(process.env.TEST_MAILPIT_PORT ?? 0);

let local: LocalBackend;
let mailpit: MailpitClient;

beforeAll(async () => {
  local = await createLocalBackend({
    projectDir: ROOT,
    host: "127.0.0.1",
    port: API_PORT,
    mailpitPort: MAILPIT_PORT,
    db: await workerDatabase(),
    config: {
      auth: { passwordHashCost: QUICK_PASSWORD_HASH_COST },
      // [local_smtp] admin_email and sender_name: who Auth's emails come from
      localSmtp: { adminEmail: "notes@edge-notes.test", senderName: "Edge Notes" },
    },
  });
  mailpit = new MailpitClient(local.mailpitUrl);
}, 60_000);
afterAll(() => local?.close());

const email = () => `mail-${crypto.randomUUID().slice(0, 12)}@example.com`;

/** A magic-link email sent by Auth to `to` (an existing account: one is made first). */
async function magicLink(to: string) {
  const admin = createClient(local.url, KEYS.secret, { auth: { persistSession: false } });
  await admin.auth.admin.createUser({
    email: to,
    password: "mailpit-password",
    email_confirm: true,
  });
  const client = createClient(local.url, KEYS.publishable, { auth: { persistSession: false } });
  const { error } = await client.auth.signInWithOtp({ email: to });
  if (error) throw error;
}

describe("the Mailpit API", () => {
  it("is on its own port and under /inbox on the API's", () => {
    expect(local.mailpitUrl).toMatch(/^http:\/\/127\.0\.0\.1:[1-9]\d*$/);
    expect(new URL(local.mailpitUrl).port).not.toBe(new URL(local.url).port);
    if (MAILPIT_PORT) expect(new URL(local.mailpitUrl).port).toBe(String(MAILPIT_PORT));
  });

  it("lists messages newest first in Mailpit's shape, and reads one as JSON, HTML, text and source", async () => {
    await mailpit.deleteMessages();
    const [first, second] = [email(), email()];
    await magicLink(first);
    await magicLink(second);

    const list = await mailpit.listMessages();
    expect(list).toMatchObject({ total: 2, unread: 2, count: 2, messages_count: 2, start: 0 });
    expect(list.messages.map((m) => m.To[0]?.Address)).toEqual([second, first]);
    const [newest] = list.messages;
    expect(newest).toMatchObject({
      Subject: "Your sign-in link",
      Read: false,
      Tags: ["magic_link"],
      Attachments: 0,
      From: { Name: "Edge Notes", Address: "notes@edge-notes.test" },
    });
    expect(Date.parse(newest?.Created ?? "")).not.toBeNaN();
    expect(newest?.Snippet).toContain("Follow the link below to sign in");

    const message = await mailpit.getMessageSummary(newest?.ID);
    expect(message.ID).toBe(newest?.ID);
    expect(message.HTML).toMatch(/href="[^"]*\/auth\/confirm\?token_hash=/);
    expect(message.Text).toMatch(/\/auth\/confirm\?token_hash=\S+type=magiclink/);
    // reading it marked it read
    expect((await mailpit.listMessages()).unread).toBe(1);
    expect((await mailpit.getMessageSummary("latest")).ID).toBe(newest?.ID);

    expect(await mailpit.renderMessageHTML(newest?.ID)).toBe(message.HTML);
    expect(await mailpit.renderMessageText("latest")).toBe(message.Text);
    const raw = await mailpit.getMessageSource(newest?.ID);
    expect(raw).toContain(`To: ${second}\r\n`);
    expect(raw).toContain("Subject: Your sign-in link\r\n");
    expect(raw).toContain('From: "Edge Notes" <notes@edge-notes.test>\r\n');
    const headers = await mailpit.getMessageHeaders(newest?.ID);
    expect(headers.To).toEqual([second]);
    expect(headers["X-Local-Token"]?.[0]).toMatch(/^\d{6}$/);
  });

  it("searches by recipient and tag, and waits for a message", async () => {
    const [a, b] = [email(), email()];
    await magicLink(a);
    await magicLink(b);
    const found = await mailpit.searchMessages({ query: `to:${a}` });
    expect(found.messages_count).toBe(1);
    expect(found.messages[0]?.To[0]?.Address).toBe(a);
    expect((await mailpit.searchMessages({ query: `to:"${b}" tag:magic_link` })).count).toBe(1);
    expect((await mailpit.searchMessages({ query: `to:${a} -tag:magic_link` })).count).toBe(0);
    const waited = await mailpit.waitForMessage({ query: `to:${b}` }, { timeout: 2000 });
    expect(waited.To[0]?.Address).toBe(b);
  });

  it("deletes some by ID, some by search, then all", async () => {
    const [a, b, c] = [email(), email(), email()];
    for (const to of [a, b, c]) await magicLink(to);
    const byA = await mailpit.searchMessages({ query: `to:${a}` });
    expect(await mailpit.deleteMessages({ IDs: [byA.messages[0]?.ID as string] })).toBe("ok");
    expect((await mailpit.searchMessages({ query: `to:${a}` })).count).toBe(0);
    expect(await mailpit.deleteMessagesBySearch({ query: `to:${b}` })).toBe("ok");
    expect((await mailpit.searchMessages({ query: `to:${b}` })).count).toBe(0);
    expect((await mailpit.searchMessages({ query: `to:${c}` })).count).toBe(1);
    await mailpit.deleteMessages();
    expect((await mailpit.listMessages()).total).toBe(0);
    // the /inbox page's store is the same
    expect(local.inbox.list()).toEqual([]);
  });

  it("answers an unknown message with a 404, as Mailpit does", async () => {
    await expect(mailpit.getMessageSummary("no-such-id")).rejects.toThrow(/404/);
    await expect(mailpit.renderMessageText("no-such-id")).rejects.toThrow(/404/);
  });

  it("works through /inbox on the API's port too", async () => {
    const to = email();
    await magicLink(to);
    const viaApi = new MailpitClient(`${local.url}/inbox`);
    const found = await viaApi.searchMessages({ query: `to:${to}` });
    expect(found.count).toBe(1);
  });

  it("is local-only: another website's request is refused, with no CORS", async () => {
    const response = await fetch(`${local.mailpitUrl}/api/v1/messages`, {
      headers: { Origin: "https://evil.example" },
    });
    expect(response.status).toBe(403);
    expect(response.headers.get("access-control-allow-origin")).toBeNull();
    const own = await fetch(`${local.mailpitUrl}/api/v1/messages`);
    expect(own.status).toBe(200);
    expect(own.headers.get("access-control-allow-origin")).toBeNull();
  });
});
