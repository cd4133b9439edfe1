// [auth.sessions] timebox and inactivity_timeout, as Auth's Session.CheckValidity applies them: a
// session older than the timebox, or not refreshed within the timeout, refreshes no more
// (400 session_expired), and an admin token of such a session is refused (403). A backend of its
// own with both limits set; the sessions are aged in the database instead of waiting.
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PUBLISHABLE_KEY } from "../../../../tests/support/backend.ts";
import { type MemoryBackend, memoryBackend } from "../../../../tests/support/memory-backend.ts";
import { loadConfig } from "../../src/project/config.ts";

let local: MemoryBackend;
beforeAll(async () => {
  local = await memoryBackend({
    auth: { sessions: { timeboxMs: 24 * 3600_000, inactivityTimeoutMs: 8 * 3600_000 } },
  });
}, 60_000);
afterAll(() => local?.close());

async function age(sessionId: string, column: "created_at" | "refreshed_at", hours: number) {
  await local.backend.db.query(
    `update auth.sessions set ${column} = now() - make_interval(hours => $2) where id = $1`,
    [sessionId, hours],
  );
}

const sessionIdOf = (token: string) =>
  JSON.parse(Buffer.from(token.split(".")[1] ?? "", "base64url").toString()).session_id as string;

describe("session limits", () => {
  it("a session past its timebox refreshes no more; one within it does", async () => {
    const { client, session } = await local.signedIn();
    expect((await client.auth.refreshSession()).error).toBeNull();
    await age(sessionIdOf(session.access_token), "created_at", 25);
    expect((await client.auth.refreshSession()).error).toMatchObject({
      status: 400,
      code: "session_expired",
      message: "Invalid Refresh Token: Session Expired",
    });
  });

  it("a session not refreshed within the inactivity timeout refreshes no more", async () => {
    const { client, session } = await local.signedIn();
    const id = sessionIdOf(session.access_token);
    expect((await client.auth.refreshSession()).error).toBeNull();
    await age(id, "refreshed_at", 7);
    expect((await client.auth.refreshSession()).error).toBeNull();
    await age(id, "refreshed_at", 9);
    expect((await client.auth.refreshSession()).error).toMatchObject({
      code: "session_expired",
      message: "Invalid Refresh Token: Session Expired (Inactivity)",
    });
  });

  it("an admin token of an expired session is refused", async () => {
    const { client, user, session } = await local.signedIn();
    await local.admin().auth.admin.updateUserById(user.id, { role: "service_role" });
    const token = (await client.auth.refreshSession()).data.session?.access_token ?? "";
    const asAdmin = () =>
      local.fetch(`${local.backend.url}/auth/v1/admin/users?per_page=1`, {
        headers: { apikey: PUBLISHABLE_KEY, authorization: `Bearer ${token}` },
      });
    expect((await asAdmin()).status).toBe(200);
    await age(sessionIdOf(session.access_token), "created_at", 25);
    const refused = await asAdmin();
    expect([refused.status, await refused.json()]).toEqual([
      403,
      { code: 403, error_code: "session_expired", msg: "Session is no longer valid" },
    ]);
  });
});

describe("[auth.sessions] in config.toml", () => {
  it("reads Go durations, and refuses what Go would not parse", () => {
    const project = (sessions: string) => {
      const dir = mkdtempSync(join(tmpdir(), "sessions-"));
      mkdirSync(join(dir, "supabase"));
      writeFileSync(join(dir, "supabase", "config.toml"), `[auth.sessions]\n${sessions}\n`);
      return dir;
    };
    const read = (sessions: string) =>
      loadConfig({ projectDir: project(sessions), warn: () => {} }).auth.sessions;
    expect(read('timebox = "24h"\ninactivity_timeout = "1h30m"')).toEqual({
      timeboxMs: 24 * 3600_000,
      inactivityTimeoutMs: 90 * 60_000,
    });
    expect(read("")).toEqual({ timeboxMs: 0, inactivityTimeoutMs: 0 });
    expect(() => read('timebox = "a day"')).toThrow(
      'auth.sessions.timebox: time: invalid duration "a day"',
    );
  });
});
