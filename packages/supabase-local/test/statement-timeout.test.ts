// Runaway queries: the API roles carry the hosted statement timeouts (anon 3 s, authenticated 8 s)
// and the data API applies a role's settings to each request, as PostgREST does (as read with its
// configuration: a changed setting applies after NOTIFY pgrst, 'reload config'). PGlite alone
// cannot cancel a running statement; the database layer does, with Postgres' answer (57014, which
// PostgREST turns into a 500), while every other request goes on being served. A dedicated backend
// with a short anon timeout keeps this quick.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PASSWORD, PUBLISHABLE_KEY } from "../../../tests/support/backend.ts";
import { type MemoryBackend, memoryBackend } from "../../../tests/support/memory-backend.ts";

// A backreference pattern Postgres' regex engine needs exponential time for on this string
// (measured: ~4 s for 45 a's, doubling with each more: 51 take minutes); without a timeout it
// holds the one database, and every request behind it, all that time.
const RUNAWAY = String.raw`^((a+)\2)+c$`;
const VICTIM = `${"a".repeat(51)}c`;

const canceled = {
  code: "57014",
  details: null,
  hint: null,
  message: "canceling statement due to statement timeout",
};

let local: MemoryBackend;
beforeAll(async () => {
  local = await memoryBackend({});
  await local.backend.db.exec(`
    create table public.timeout_probe (id int primary key, body text not null);
    grant select, insert on public.timeout_probe to anon, authenticated, service_role;
    insert into public.timeout_probe values (1, '${VICTIM}'), (2, 'plain');
    create function public.current_statement_timeout() returns text
      language sql stable as $$ select current_setting('statement_timeout') $$;
    grant execute on function public.current_statement_timeout() to anon, authenticated, service_role;
  `);
}, 60_000);
afterAll(() => local?.close());

/** anon's statement_timeout, as the data API applies it to anon's requests. */
async function anonTimeout(): Promise<unknown> {
  return (await local.client().rpc("current_statement_timeout")).data;
}

/** Sets anon's statement_timeout and reloads the data API's configuration, as a project would. */
async function setAnonTimeout(value: string) {
  await local.backend.db.exec(`alter role anon set statement_timeout = '${value}';
    notify pgrst, 'reload config'`);
  for (let tries = 0; (await anonTimeout()) !== value; tries++) {
    if (tries > 40) throw new Error(`anon's statement_timeout is not ${value} after the reload`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe("statement timeouts", () => {
  it("the API roles carry the hosted timeouts, applied to each data API request by role", async () => {
    const { rows } = await local.backend.db.query<{ rolname: string; rolconfig: string[] | null }>(
      `select rolname, rolconfig from pg_roles
       where rolname in ('anon', 'authenticated', 'service_role') order by rolname`,
    );
    expect(rows).toEqual([
      { rolname: "anon", rolconfig: ["statement_timeout=3s"] },
      { rolname: "authenticated", rolconfig: ["statement_timeout=8s"] },
      { rolname: "service_role", rolconfig: null },
    ]);
    const anon = await local.client().rpc("current_statement_timeout");
    expect(anon.data).toBe("3s");
    const { client } = await local.signedIn();
    expect((await client.rpc("current_statement_timeout")).data).toBe("8s");
    expect((await local.admin().rpc("current_statement_timeout")).data).toBe("0");
    // the request's setting ends with its transaction
    const { rows: after } = await local.backend.db.query<{ t: string }>(
      "select current_setting('statement_timeout') as t",
    );
    expect(after).toEqual([{ t: "0" }]);
  });

  it("a changed role setting applies after NOTIFY pgrst, 'reload config', not before", async () => {
    await local.backend.db.exec("alter role anon set statement_timeout = '2s'");
    try {
      // the role's settings as the data API read them with its configuration
      expect(await anonTimeout()).toBe("3s");
      await setAnonTimeout("2s");
      expect(await anonTimeout()).toBe("2s");
    } finally {
      await setAnonTimeout("3s");
    }
  });

  it("a runaway match filter is cancelled with PostgREST's 500 57014; other requests are served meanwhile", {
    timeout: 60_000,
  }, async () => {
    await setAnonTimeout("300ms");
    try {
      const committed = await local.admin().from("timeout_probe").insert({ id: 3, body: "kept" });
      expect(committed.error).toBeNull();
      const { email } = await local.signedIn();

      const started = performance.now();
      const runaway = local
        .client()
        .from("timeout_probe")
        .select("id")
        .regexMatch("body", RUNAWAY)
        .then((answer) => ({ answer, ms: performance.now() - started }));
      const others = Promise.all([
        local.client().from("timeout_probe").select("id, body").eq("id", 2),
        local.client().auth.signInWithPassword({ email, password: PASSWORD }),
      ]).then((answers) => ({ answers, ms: performance.now() - started }));

      const refused = await runaway;
      expect(refused.answer.status).toBe(500);
      expect(refused.answer.error).toEqual(canceled);
      expect(refused.answer.data).toBeNull();

      const { answers, ms } = await others;
      expect(answers[0].data).toEqual([{ id: 2, body: "plain" }]);
      expect(answers[1].error).toBeNull();
      // 300 ms and a restart of the database (a second or two on a busy machine), where the
      // pattern alone would hold it for minutes; the bounds leave room for a very busy machine
      expect(refused.ms).toBeLessThan(10_000);
      expect(ms).toBeLessThan(20_000);

      // the raw answer, as PostgREST gives it; the data committed before is still there
      const raw = await local.fetch(
        `${local.backend.url}/rest/v1/timeout_probe?select=id&body=match.${encodeURIComponent(RUNAWAY)}`,
        { headers: { apikey: PUBLISHABLE_KEY } },
      );
      expect(raw.status).toBe(500);
      expect(raw.headers.get("content-type")).toBe("application/json; charset=utf-8");
      expect(await raw.json()).toEqual(canceled);
      const kept = await local.admin().from("timeout_probe").select("id").order("id");
      expect(kept.data).toEqual([{ id: 1 }, { id: 2 }, { id: 3 }]);
    } finally {
      await setAnonTimeout("3s");
    }
  });

  it("a write cancelled by the timeout leaves nothing behind", async () => {
    await local.backend.db.exec(`
      create table public.timeout_write (id int primary key, body text not null);
      grant select, update on public.timeout_write to anon;
      insert into public.timeout_write values (1, 'plain'), (2, '${VICTIM}');
    `);
    await setAnonTimeout("300ms");
    try {
      // row 1 ('plain' does not match) is updated first, then row 2's pattern runs out of time
      const updated = await local.fetch(
        `${local.backend.url}/rest/v1/timeout_write?body=not.match.${encodeURIComponent(RUNAWAY)}`,
        {
          method: "PATCH",
          headers: { apikey: PUBLISHABLE_KEY, "Content-Type": "application/json" },
          body: JSON.stringify({ body: "changed" }),
        },
      );
      expect(updated.status).toBe(500);
      expect(await updated.json()).toEqual(canceled);
      const { rows } = await local.backend.db.query<{ id: number; body: string }>(
        "select id, body from public.timeout_write order by id",
      );
      expect(rows).toEqual([
        { id: 1, body: "plain" },
        { id: 2, body: VICTIM },
      ]);
    } finally {
      await setAnonTimeout("3s");
    }
  });
});
