// Every function the data API exposes follows the database's access rules, checked from the
// catalogue, not from a list kept by hand: a function added later without the guards fails here.
//
// Which functions: pg_proc rows in the exposed schemas (config.toml [api] schemas: public,
// graphql_public) that `anon` or `authenticated` may EXECUTE (has_function_privilege, which also
// counts grants to PUBLIC). Left out, because the data API cannot call them: trigger and event
// trigger functions (return type trigger/event_trigger: Postgres refuses to call them directly),
// procedures, aggregates and window functions (prokind other than 'f'; /rpc calls only plain
// functions), and functions neither role may execute (the API runs every request as one of them,
// or as service_role, which bypasses RLS anyway). Schemas the API does not expose (private, auth)
// are out of reach by construction.
//
// For each function, through /rest/v1/rpc with arguments built from its signature:
// - a control call by the owner's aal2 session, rolled back (Prefer: tx=rollback), must succeed,
//   which shows the sample arguments reach the function's body;
// - an aal1 session of the same user, who has a verified TOTP factor, must get 403 42501 with the
//   aal guard's message (private.require_aal());
// - an anonymous session must get 403 42501 with private.require_permanent_user()'s message;
// - the publishable key alone (role anon) must get 401 42501;
// - a signed-out aal2 session of the owner must get the data API's pre-request refusal (401 PT401,
//   private.require_live_session()), and, called in SQL as that session without the pre-request
//   (as any other client of the database would call it), the function's own guard must raise the
//   same PT401;
// - and no table in public or private (nor auth.sessions, auth.refresh_tokens) may differ afterwards.
// Separately, no function in an exposed schema may be executable by PUBLIC, nor by anon unless it
// is listed in ANON_EXECUTABLE (none is); in `private`, anon may execute no security definer
// function but the pre-request's. The last test adds offending functions to the live database and
// checks that this audit reports each one.
//
// It runs on a backend of its own (in memory, no test fixtures: exactly the app's migrations),
// with anonymous sign-ins on as a hosted project might have them.
import type { SupabaseClient } from "@supabase/supabase-js";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { PASSWORD, PUBLISHABLE_KEY } from "../support/backend.ts";
import { type MemoryBackend, memoryBackend } from "../support/memory-backend.ts";
import { aalOf, enrollVerifiedTotp, totpCode } from "../support/mfa.ts";

const AAL_REFUSAL = {
  code: "42501",
  message: "This account has a second factor: an aal2 session is required",
};
const ANONYMOUS_REFUSAL = {
  code: "42501",
  message: "Anonymous users cannot do this: sign up with an email address first",
};
/** A session that was signed out (20261127000400_ended_sessions_signed_out_at_once.sql). */
const SESSION_ENDED = {
  code: "PT401",
  message: "Session from session_id claim in JWT does not exist",
};

/** Functions that requests with only the publishable key (role anon) may call on purpose. */
const ANON_EXECUTABLE: string[] = [];

interface Routine {
  schema: string;
  name: string;
  signature: string;
  kind: string;
  returns: string;
  anon: boolean;
  authenticated: boolean;
  public: boolean;
  /** the input arguments, in order ('' for an unnamed one) */
  args: { name: string; type: string }[];
}

const CATALOGUE = `
select n.nspname as schema, p.proname as name, p.oid::regprocedure::text as signature,
       p.prokind::text as kind, p.prorettype::regtype::text as returns,
       has_function_privilege('anon', p.oid, 'EXECUTE') as anon,
       has_function_privilege('authenticated', p.oid, 'EXECUTE') as authenticated,
       exists (
         select 1 from aclexplode(coalesce(p.proacl, acldefault('f', p.proowner))) acl
         where acl.grantee = 0 and acl.privilege_type = 'EXECUTE'
       ) as public,
       coalesce((
         select json_agg(json_build_object('name', coalesce(a.name, ''),
                                           'type', format_type(a.type, null)) order by a.ord)
         from unnest(
           coalesce(p.proallargtypes, p.proargtypes::oid[]),
           coalesce(p.proargmodes, array_fill('i'::"char", array[p.pronargs::int])),
           p.proargnames
         ) with ordinality as a (type, mode, name, ord)
         where a.mode in ('i', 'b', 'v')
       ), '[]'::json) as args
from pg_proc p
join pg_namespace n on n.oid = p.pronamespace
where n.nspname = any($1)
order by 1, 3`;

/** What the API can call: plain functions, not triggers, executable by anon or authenticated. */
function callable(r: Routine): boolean {
  return (
    r.kind === "f" &&
    r.returns !== "trigger" &&
    r.returns !== "event_trigger" &&
    (r.anon || r.authenticated)
  );
}

let local: MemoryBackend;
let noteId: string;
let recipientEmail: string;
/** the owner's aal2 session (a function argument named *session* gets it) */
let ownerSessionId: string;
/** access tokens: the owner at aal2 and aal1, an anonymous user, the owner's signed-out aal2 session */
let tokens: { aal2: string; aal1: string; anonymous: string; ended: string };

beforeAll(async () => {
  local = await memoryBackend({ auth: { enableAnonymousSignIns: true } });
  // The control calls are rolled back with Prefer: tx=rollback, which PostgREST honours only
  // where db-tx-end allows an override; the Supabase CLI's PostgREST (db-tx-end commit) ignores
  // it and would keep their writes. Reset in afterAll: the worker's other files share the database.
  await setTxEnd("set pgrst.db_tx_end = 'commit-allow-override'");
  const owner = await local.signedIn();
  const totp = await enrollVerifiedTotp(owner.client);
  expect(await aalOf(owner.client)).toBe("aal2");
  const note = await owner.client
    .from("notes")
    .insert({ title: "Private: second factor needed" })
    .select("id")
    .single();
  if (note.error) throw note.error;
  noteId = note.data.id;
  recipientEmail = (await local.signedIn()).email;
  const token = async (c: SupabaseClient) =>
    (await c.auth.getSession()).data.session?.access_token ?? "";

  // The owner on another device, at aal2, then signed out there: its token is still unexpired.
  // (Before the aal1 sign-in below: verifying a factor ends the user's aal1 sessions.)
  const laterSignedOut = local.client();
  const again = await laterSignedOut.auth.signInWithPassword({
    email: owner.email,
    password: PASSWORD,
  });
  if (again.error) throw again.error;
  const stepUp = await laterSignedOut.auth.mfa.challengeAndVerify({
    factorId: totp.factorId,
    // the next period's code: the one that verified the factor may not be used again
    code: totpCode(totp.secret, 30),
  });
  if (stepUp.error) throw stepUp.error;
  expect(await aalOf(laterSignedOut)).toBe("aal2");
  const ended = await token(laterSignedOut);
  const signOut = await laterSignedOut.auth.signOut({ scope: "local" });
  if (signOut.error) throw signOut.error;

  // The attacker knows the password only: a password sign-in of the same user is aal1.
  const passwordOnly = local.client();
  const signIn = await passwordOnly.auth.signInWithPassword({
    email: owner.email,
    password: PASSWORD,
  });
  if (signIn.error) throw signIn.error;
  expect(await aalOf(passwordOnly)).toBe("aal1");
  const anonymous = local.client();
  const anonSignIn = await anonymous.auth.signInAnonymously();
  if (anonSignIn.error) throw anonSignIn.error;
  ownerSessionId = claimsOf(await token(owner.client)).session_id as string;
  tokens = {
    aal2: await token(owner.client),
    aal1: await token(passwordOnly),
    anonymous: await token(anonymous),
    ended,
  };
}, 60_000);

afterAll(async () => {
  await setTxEnd("reset pgrst.db_tx_end");
  await local?.close();
});

async function setTxEnd(change: string) {
  await local?.backend.db.exec(`alter role authenticator ${change}; notify pgrst, 'reload config'`);
}

function claimsOf(jwt: string): Record<string, unknown> {
  return JSON.parse(Buffer.from(jwt.split(".")[1] ?? "", "base64url").toString() || "{}");
}

/**
 * A value for one argument, from its type (and, for text, its name, so the call is the one an
 * attacker would make): uuid = the owner's note (or, named *session*, the owner's aal2 session),
 * text named *email* = another user's address.
 */
function sample(arg: { name: string; type: string }): unknown {
  switch (arg.type) {
    case "uuid":
      return /session/i.test(arg.name) ? ownerSessionId : noteId;
    case "text":
      if (/email/i.test(arg.name)) return recipientEmail;
      if (/kind/i.test(arg.name)) return "signed_in";
      return "catalogue";
    case "text[]":
      return ["catalogue"];
    case "json":
    case "jsonb":
      return {};
    case "integer":
    case "bigint":
    case "smallint":
    case "numeric":
      return 1;
    case "boolean":
      return true;
    case "timestamp with time zone":
      return new Date().toISOString();
    default:
      throw new Error(`no sample value for type ${arg.type}: add one to sample()`);
  }
}

async function rpc(r: Routine, args: Record<string, unknown>, token?: string, prefer?: string) {
  const headers: Record<string, string> = {
    apikey: PUBLISHABLE_KEY,
    "Content-Type": "application/json",
    "Content-Profile": r.schema,
  };
  if (token) headers.Authorization = `Bearer ${token}`;
  if (prefer) headers.Prefer = prefer;
  const response = await local.fetch(`${local.backend.url}/rest/v1/rpc/${r.name}`, {
    method: "POST",
    headers,
    body: JSON.stringify(args),
  });
  const text = await response.text();
  let body: { code?: string; message?: string } = {};
  try {
    body = JSON.parse(text);
  } catch {}
  const applied = response.headers.get("preference-applied");
  return { status: response.status, code: body?.code, message: body?.message, text, applied };
}

/**
 * Calls the function in SQL as the session of `token` (role authenticated, its claims), as any
 * client of the database other than the data API would: no pre-request runs, so only the
 * function's own guard stands between it and its body. The arguments travel as JSON and are cast
 * to the signature's types. Returns the error it raised, or null when it ran.
 */
async function callInSql(r: Routine, args: Record<string, unknown>, token: string) {
  const named = r.args.map((a, i) => {
    const json = `$${i + 1}::jsonb`;
    const value = a.type.endsWith("[]")
      ? `array(select jsonb_array_elements_text(${json}))`
      : a.type === "json" || a.type === "jsonb"
        ? json
        : `(${json} #>> '{}')`;
    return `"${a.name}" => ${value}::${a.type}`;
  });
  try {
    await local.backend.db.transaction(async (tx) => {
      await tx.query(
        `select set_config('role', 'authenticated', true),
                set_config('request.jwt.claims', $1, true)`,
        [JSON.stringify(claimsOf(token))],
      );
      await tx.query(
        `select "${r.schema}"."${r.name}"(${named.join(", ")})`,
        r.args.map((a) => JSON.stringify(args[a.name])),
      );
    });
    return null;
  } catch (error) {
    const e = error as { code?: string; message?: string };
    return { code: e.code, message: e.message };
  }
}

/**
 * A digest of every row of every table in public and private, and of the auth tables the
 * functions may touch (sessions, refresh tokens), as the superuser.
 */
async function fingerprint(): Promise<Record<string, string>> {
  const tables = await local.backend.db.query<{ t: string }>(
    `select format('%I.%I', schemaname, tablename) as t from pg_tables
     where schemaname in ('public', 'private')
        or (schemaname = 'auth' and tablename in ('sessions', 'refresh_tokens'))
     order by 1`,
  );
  const out: Record<string, string> = {};
  for (const { t } of tables.rows) {
    const r = await local.backend.db.query<{ h: string }>(
      `select md5(coalesce(string_agg(x::text, '|' order by x::text), '')) as h from ${t} x`,
    );
    out[t] = r.rows[0]?.h ?? "";
  }
  return out;
}

async function catalogue(): Promise<Routine[]> {
  const { rows } = await local.backend.db.query<Routine>(CATALOGUE, [
    local.backend.config.api.schemas,
  ]);
  return rows;
}

/**
 * The security definer functions of `private` that anon may execute (not triggers, which cannot be
 * called). anon has usage on the schema only for the data API's pre-request function; any other
 * such function would run as its owner for a request with no session at all.
 */
async function anonInPrivate(): Promise<string[]> {
  const { rows } = await local.backend.db.query<{ f: string }>(
    `select p.oid::regprocedure::text as f from pg_proc p
     where p.pronamespace = 'private'::regnamespace and p.prosecdef
       and p.prorettype not in ('trigger'::regtype, 'event_trigger'::regtype)
       and has_function_privilege('anon', p.oid, 'EXECUTE')
     order by 1`,
  );
  return rows.map((r) => r.f);
}

/** The audit: what is wrong with the exposed functions (empty when all is well). */
async function audit(): Promise<{ called: string[]; failures: string[] }> {
  const routines = await catalogue();
  const failures: string[] = [];
  const called: string[] = [];
  for (const r of routines) {
    const id = `${r.schema}.${r.signature}`;
    if (r.public) failures.push(`${id}: EXECUTE is granted to PUBLIC`);
    if (r.anon && !ANON_EXECUTABLE.includes(id)) failures.push(`${id}: executable by anon`);
  }
  for (const r of routines.filter(callable)) {
    const id = `${r.schema}.${r.signature}`;
    called.push(id);
    if (r.args.some((a) => a.name === "")) {
      failures.push(`${id}: has an unnamed argument (the API calls functions by argument names)`);
      continue;
    }
    const args = Object.fromEntries(r.args.map((a) => [a.name, sample(a)]));
    const control = await rpc(r, args, tokens.aal2, "tx=rollback");
    if (control.status >= 300) {
      failures.push(`${id}: the aal2 control call failed (${control.status} ${control.text})`);
    }
    if (!control.applied?.includes("tx=rollback")) {
      failures.push(`${id}: the aal2 control call was not rolled back (${control.applied})`);
    }
    const before = await fingerprint();
    for (const [who, token, status, expected] of [
      ["aal1", tokens.aal1, 403, AAL_REFUSAL],
      ["anonymous", tokens.anonymous, 403, ANONYMOUS_REFUSAL],
      ["anon key", undefined, 401, { code: "42501", message: undefined }],
      ["ended session", tokens.ended, 401, SESSION_ENDED],
    ] as const) {
      const call = await rpc(r, args, token);
      const refused =
        call.status === status &&
        call.code === expected.code &&
        (!expected.message || call.message === expected.message);
      if (!refused) failures.push(`${id}: ${who} call not refused (${call.status} ${call.text})`);
    }
    const inSql = await callInSql(r, args, tokens.ended);
    if (inSql?.code !== SESSION_ENDED.code || inSql.message !== SESSION_ENDED.message) {
      failures.push(
        `${id}: ended session call in SQL (no pre-request) not refused (${JSON.stringify(inSql)})`,
      );
    }
    const after = await fingerprint();
    const changed = Object.keys(after).filter((t) => after[t] !== before[t]);
    if (changed.length > 0) failures.push(`${id}: refused calls changed ${changed.join(", ")}`);
  }
  return { called, failures };
}

describe("functions exposed through the data API (from the catalogue)", () => {
  test("each refuses aal1 sessions of a user with a second factor, anonymous users, anon and ended sessions, changing nothing", async () => {
    const { called, failures } = await audit();
    // A floor, so a catalogue query that finds nothing cannot pass: the app's own RPCs.
    expect(called).toEqual(
      expect.arrayContaining([
        "public.end_my_session(uuid)",
        "public.list_my_sessions()",
        "public.list_note_shares(uuid)",
        "public.set_note_tags(uuid,text[])",
        "public.share_note(uuid,text)",
      ]),
    );
    expect(failures).toEqual([]);
  });

  test("in private, anon may execute only the pre-request's security definer function", async () => {
    expect(await anonInPrivate()).toEqual(["private.require_live_session()"]);
  });

  test("the audit reports a function without the guards, and ones executable by anon or PUBLIC", async () => {
    const { db } = local.backend;
    await db.exec(`
      create function public.catalogue_probe_unguarded(note_id uuid) returns boolean
        language sql security definer set search_path = '' as $$
          update public.notes set pinned = true where id = note_id returning true
        $$;
      revoke all on function public.catalogue_probe_unguarded(uuid) from public, anon;
      grant execute on function public.catalogue_probe_unguarded(uuid) to authenticated;
      create function public.catalogue_probe_open() returns int language sql as $$ select 1 $$;
      grant execute on function public.catalogue_probe_open() to anon;
      create function private.catalogue_probe_unexposed() returns int language sql as $$ select 1 $$;
      create function private.catalogue_probe_definer() returns int
        language sql security definer set search_path = '' as $$ select 1 $$;
      NOTIFY pgrst, 'reload schema';
    `);
    try {
      // Wait for the schema cache to know the new function.
      const probe = (await catalogue()).find((r) => r.name === "catalogue_probe_unguarded");
      if (!probe) throw new Error("probe function not in the catalogue");
      for (let i = 0; i < 50; i++) {
        if ((await rpc(probe, { note_id: noteId }, tokens.aal2, "tx=rollback")).status === 200)
          break;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      const { called, failures } = await audit();
      expect(called).not.toContain("private.catalogue_probe_unexposed()");
      const about = (name: string) => failures.filter((f) => f.startsWith(`public.${name}`));
      // Through the data API the pre-request refuses the ended session before any function runs;
      // called in SQL, nothing does.
      expect(about("catalogue_probe_unguarded(uuid)")).toEqual([
        expect.stringMatching(/aal1 call not refused \(200 /),
        expect.stringMatching(/anonymous call not refused \(200 /),
        expect.stringMatching(/ended session call in SQL \(no pre-request\) not refused \(null\)/),
        expect.stringContaining("refused calls changed public.notes"),
      ]);
      expect(about("catalogue_probe_open()")).toEqual(
        expect.arrayContaining([
          "public.catalogue_probe_open(): EXECUTE is granted to PUBLIC",
          "public.catalogue_probe_open(): executable by anon",
          expect.stringMatching(/aal1 call not refused \(200 /),
          expect.stringMatching(/anon key call not refused \(200 /),
        ]),
      );
      // Nothing else: the app's functions still pass.
      expect(failures.filter((f) => !f.includes("catalogue_probe_"))).toEqual([]);
      expect(await anonInPrivate()).toEqual([
        "private.catalogue_probe_definer()",
        "private.require_live_session()",
      ]);
    } finally {
      await db.exec(`
        drop function public.catalogue_probe_unguarded(uuid);
        drop function public.catalogue_probe_open();
        drop function private.catalogue_probe_unexposed();
        drop function private.catalogue_probe_definer();
      `);
    }
  });
});
