// The notes schema's row-level security as a matrix, through the real supabase-js with real ES256
// session tokens: for each table × {anon, owner, the owner's aal1 session, other user, shared-with
// user, anonymous user, service_role}, exactly which of select / insert / update / delete succeed
// on the owner's rows. "Succeeded" is judged by the service role reading the database afterwards
// (for select: the owner's row came back), so an operation that answers 200 with nothing done
// counts as refused, and no refused cell may leak a row or answer 5xx.
//
// The owner has a verified TOTP factor: "owner" is their aal2 session, "aal1" the same user signed
// in with the password only, "ended" another aal2 session of theirs that signed out (its access
// token is still unexpired). The data API refuses "ended" before it runs anything (db_pre_request);
// the last part of the file switches the pre-request off to show that the restrictive policies
// alone refuse it too, and checks from the catalogue that every table carries both rules. It runs
// on a backend of its own with anonymous sign-ins on (as a hosted project might have them;
// config.toml has them off), for the "anonymous" row.
import { createClient, type SupabaseClient } from "@supabase/supabase-js";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { PASSWORD, PUBLISHABLE_KEY } from "../support/backend.ts";
import { signedOutSession } from "../support/ended-session.ts";
import { type MemoryBackend, memoryBackend } from "../support/memory-backend.ts";
import { aalOf, enrollVerifiedTotp, totpCode } from "../support/mfa.ts";

type Actor = "anon" | "owner" | "aal1" | "ended" | "other" | "recipient" | "anonymous" | "service";
type Op = "select" | "insert" | "update" | "delete";
type Table = "profiles" | "notes" | "tags" | "note_tags" | "note_shares";

const ALL: Op[] = ["select", "insert", "update", "delete"];

/**
 * The whole policy in one table. Shares are only made by share_note() (so no one but the service
 * role inserts into note_shares directly) and are removed by the owner or by the recipient; tags
 * and note links are never updated, only replaced; profiles come from the sign-up trigger and go
 * with the user. The owner's aal1 session, their ended session and anonymous users reach nothing.
 */
const EXPECTED: Record<Table, Record<Actor, Op[]>> = {
  profiles: {
    anon: [],
    owner: ["select", "update"],
    aal1: [],
    ended: [],
    other: [],
    recipient: ["select"],
    anonymous: [],
    service: ALL,
  },
  notes: {
    anon: [],
    owner: ALL,
    aal1: [],
    ended: [],
    other: [],
    recipient: ["select"],
    anonymous: [],
    service: ALL,
  },
  tags: {
    anon: [],
    owner: ["select", "insert", "delete"],
    aal1: [],
    ended: [],
    other: [],
    recipient: [],
    anonymous: [],
    service: ALL,
  },
  note_tags: {
    anon: [],
    owner: ["select", "insert", "delete"],
    aal1: [],
    ended: [],
    other: [],
    recipient: [],
    anonymous: [],
    service: ALL,
  },
  note_shares: {
    anon: [],
    owner: ["select", "delete"],
    aal1: [],
    ended: [],
    other: [],
    recipient: ["select", "delete"],
    anonymous: [],
    service: ALL,
  },
};

interface Person {
  id: string;
  email: string;
  client: SupabaseClient;
}

let local: MemoryBackend;
let owner: Person;
let other: Person;
let recipient: Person;
let service: SupabaseClient;
let clients: Record<Actor, SupabaseClient>;

/** A confirmed user of the matrix's backend, not signed in. */
async function freshUser() {
  return local.signedIn();
}

beforeAll(async () => {
  local = await memoryBackend({ auth: { enableAnonymousSignIns: true } });
  const people = await Promise.all([local.signedIn(), local.signedIn(), local.signedIn()]);
  [owner, other, recipient] = people.map((p) => ({
    id: p.user.id,
    email: p.email,
    client: p.client,
  })) as [Person, Person, Person];
  const totp = await enrollVerifiedTotp(owner.client);
  // (Before the aal1 sign-in: verifying a factor ends the user's aal1 sessions.)
  const ended = await signedOutSession(local, owner.email, totp);
  const aal1 = local.client();
  const signIn = await aal1.auth.signInWithPassword({ email: owner.email, password: PASSWORD });
  if (signIn.error) throw signIn.error;
  expect([await aalOf(owner.client), await aalOf(aal1)]).toEqual(["aal2", "aal1"]);
  const anonymous = local.client();
  const anonSignIn = await anonymous.auth.signInAnonymously();
  if (anonSignIn.error) throw anonSignIn.error;
  service = local.admin();
  clients = {
    anon: local.client(),
    owner: owner.client,
    aal1,
    ended,
    other: other.client,
    recipient: recipient.client,
    anonymous,
    service,
  };
}, 60_000);

afterAll(() => local?.close());

/** The owner's rows one cell works on: a note with a tag, shared with the recipient, + a spare tag. */
interface World {
  noteId: string;
  tagId: string;
  spareTagId: string;
}

async function world(): Promise<World> {
  const note = await owner.client
    .from("notes")
    .insert({ title: "Owner's secret", body: "matrix" })
    .select("id")
    .single();
  if (note.error) throw note.error;
  const tags = await owner.client.rpc("set_note_tags", {
    note_id: note.data.id,
    tag_names: [`t${crypto.randomUUID().slice(0, 8)}`],
  });
  if (tags.error) throw tags.error;
  const shared = await owner.client.rpc("share_note", {
    note_id: note.data.id,
    email: recipient.email,
  });
  if (shared.data !== "shared") throw new Error(`share: ${JSON.stringify(shared)}`);
  const spare = await owner.client
    .from("tags")
    .insert({ name: `s${crypto.randomUUID().slice(0, 8)}` })
    .select("id")
    .single();
  if (spare.error) throw spare.error;
  return { noteId: note.data.id, tagId: tags.data[0].id, spareTagId: spare.data.id };
}

const fresh = () => `x${crypto.randomUUID().replaceAll("-", "").slice(0, 12)}`;

/** What the service role sees (the truth), as one row or null. */
async function truth(table: Table, match: Record<string, string>) {
  const { data, error } = await service.from(table).select("*").match(match).maybeSingle();
  if (error) throw error;
  return data as Record<string, unknown> | null;
}

/** A response must be a clean refusal or success: never a 5xx, never rows on a refusal. */
function checkResponse(response: { status: number; error: unknown }) {
  expect(response.status, JSON.stringify(response.error)).toBeLessThan(500);
}

/** One cell: did `actor` manage `op` on the owner's rows of `table`? */
async function attempt(table: Table, actor: Actor, op: Op): Promise<boolean> {
  const c = clients[actor];
  const w = await world();
  // As the owner, rows are created with the default owner; anyone else tries to place them in
  // the owner's space explicitly (the service role may, users may not).
  const asOwner = actor === "owner";
  switch (`${table}.${op}`) {
    case "profiles.select": {
      const r = await c.from("profiles").select("id, display_name").eq("id", owner.id);
      checkResponse(r);
      return (r.data ?? []).length === 1;
    }
    case "profiles.insert": {
      // A user whose profile is missing (removed by the service role): who may create it?
      const spare = await freshUser();
      await service.from("profiles").delete().eq("id", spare.user.id);
      const r = await c.from("profiles").insert({ id: spare.user.id, username: fresh() });
      checkResponse(r);
      return (await truth("profiles", { id: spare.user.id })) !== null;
    }
    case "profiles.update": {
      const username = fresh();
      const r = await c.from("profiles").update({ username }).eq("id", owner.id);
      checkResponse(r);
      return (await truth("profiles", { id: owner.id }))?.username === username;
    }
    case "profiles.delete": {
      // The service role deletes a throwaway user's profile; everyone else tries the owner's.
      const target = actor === "service" ? (await freshUser()).user.id : owner.id;
      const r = await c.from("profiles").delete().eq("id", target);
      checkResponse(r);
      return (await truth("profiles", { id: target })) === null;
    }
    case "notes.select": {
      const r = await c.from("notes").select("id, title, body").eq("id", w.noteId);
      checkResponse(r);
      return (r.data ?? []).length === 1;
    }
    case "notes.insert": {
      const title = fresh();
      const r = await c.from("notes").insert(asOwner ? { title } : { title, owner_id: owner.id });
      checkResponse(r);
      return (await truth("notes", { title, owner_id: owner.id })) !== null;
    }
    case "notes.update": {
      const title = fresh();
      const r = await c.from("notes").update({ title, pinned: true }).eq("id", w.noteId);
      checkResponse(r);
      return (await truth("notes", { id: w.noteId }))?.title === title;
    }
    case "notes.delete": {
      const r = await c.from("notes").delete().eq("id", w.noteId);
      checkResponse(r);
      return (await truth("notes", { id: w.noteId })) === null;
    }
    case "tags.select": {
      const r = await c.from("tags").select("id, name").eq("id", w.tagId);
      checkResponse(r);
      return (r.data ?? []).length === 1;
    }
    case "tags.insert": {
      const name = fresh();
      const r = await c.from("tags").insert(asOwner ? { name } : { name, owner_id: owner.id });
      checkResponse(r);
      return (await truth("tags", { name, owner_id: owner.id })) !== null;
    }
    case "tags.update": {
      const name = fresh();
      const r = await c.from("tags").update({ name }).eq("id", w.tagId);
      checkResponse(r);
      return (await truth("tags", { id: w.tagId }))?.name === name;
    }
    case "tags.delete": {
      const r = await c.from("tags").delete().eq("id", w.spareTagId);
      checkResponse(r);
      return (await truth("tags", { id: w.spareTagId })) === null;
    }
    case "note_tags.select": {
      const r = await c.from("note_tags").select("note_id, tag_id").eq("note_id", w.noteId);
      checkResponse(r);
      return (r.data ?? []).length === 1;
    }
    case "note_tags.insert": {
      const r = await c.from("note_tags").insert({ note_id: w.noteId, tag_id: w.spareTagId });
      checkResponse(r);
      return (await truth("note_tags", { note_id: w.noteId, tag_id: w.spareTagId })) !== null;
    }
    case "note_tags.update": {
      const r = await c
        .from("note_tags")
        .update({ tag_id: w.spareTagId })
        .match({ note_id: w.noteId, tag_id: w.tagId });
      checkResponse(r);
      return (await truth("note_tags", { note_id: w.noteId, tag_id: w.spareTagId })) !== null;
    }
    case "note_tags.delete": {
      const r = await c.from("note_tags").delete().match({ note_id: w.noteId, tag_id: w.tagId });
      checkResponse(r);
      return (await truth("note_tags", { note_id: w.noteId, tag_id: w.tagId })) === null;
    }
    case "note_shares.select": {
      // shared_with (the recipient's id) is selectable by no API role: see notes-schema.test.ts.
      const r = await c
        .from("note_shares")
        .select("note_id, shared_with_email")
        .eq("note_id", w.noteId);
      checkResponse(r);
      return (r.data ?? []).length === 1;
    }
    case "note_shares.insert": {
      const r = await c.from("note_shares").insert({
        note_id: w.noteId,
        owner_id: owner.id,
        shared_with: other.id,
        shared_with_email: other.email,
      });
      checkResponse(r);
      return (await truth("note_shares", { note_id: w.noteId, shared_with: other.id })) !== null;
    }
    case "note_shares.update": {
      const r = await c
        .from("note_shares")
        .update({ shared_with_email: "changed@example.com" })
        .match({ note_id: w.noteId, shared_with_email: recipient.email });
      checkResponse(r);
      return (
        (await truth("note_shares", { note_id: w.noteId, shared_with: recipient.id }))
          ?.shared_with_email === "changed@example.com"
      );
    }
    case "note_shares.delete": {
      const r = await c
        .from("note_shares")
        .delete()
        .match({ note_id: w.noteId, shared_with_email: recipient.email });
      checkResponse(r);
      return (
        (await truth("note_shares", { note_id: w.noteId, shared_with: recipient.id })) === null
      );
    }
  }
  throw new Error(`no cell ${table}.${op}`);
}

const TABLES = Object.keys(EXPECTED) as Table[];
const ACTORS: Actor[] = [
  "anon",
  "owner",
  "aal1",
  "ended",
  "other",
  "recipient",
  "anonymous",
  "service",
];

describe.each(TABLES)("%s", (table) => {
  test.each(ACTORS)("%s", async (actor) => {
    const succeeded: Op[] = [];
    for (const op of ALL) if (await attempt(table, actor, op)) succeeded.push(op);
    expect(succeeded).toEqual(EXPECTED[table][actor]);
  });
});

describe("no leak through listing", () => {
  test("strangers and anon list nothing of the owner's; the recipient lists only the shared note", async () => {
    // A stranger of their own (the matrix's service-role cells shared a note with `other`).
    const stranger = (await local.signedIn()).client;
    const w = await world();
    const unshared = await owner.client
      .from("notes")
      .insert({ title: "Not shared" })
      .select("id")
      .single();
    for (const table of TABLES) {
      // note_shares: every column but shared_with (which no API role may select).
      const columns = table === "note_shares" ? "note_id, owner_id, shared_with_email" : "*";
      const anon = await clients.anon.from(table).select(columns);
      expect(anon.status).toBe(401);
      expect(anon.data).toBeNull();
      for (const who of [stranger, clients.aal1, clients.anonymous]) {
        const listed = await who.from(table).select(columns);
        expect(listed.error).toBeNull();
        expect(JSON.stringify(listed.data)).not.toContain(owner.id);
      }
    }
    const notes = await recipient.client.from("notes").select("id, owner_id");
    const ids = (notes.data ?? []).map((n) => n.id);
    expect(ids).toContain(w.noteId);
    expect(ids).not.toContain(unshared.data?.id);
    // Embedding the owner's tags through a shared note shows none of them.
    const embedded = await recipient.client
      .from("notes")
      .select("id, tags(name)")
      .eq("id", w.noteId)
      .single();
    expect(embedded.data?.tags).toEqual([]);
    // Full-text search cannot find unshared notes either.
    const found = await stranger.from("notes").select("id").textSearch("search", "secret", {
      type: "websearch",
      config: "english",
    });
    expect(found.data).toEqual([]);
  });
});

describe("the share helpers are asked about other people's rows only", () => {
  // The recipients' policies call a security definer helper, once per row they look at
  // (supabase/migrations/20261129000100_share_policies_owner_first.sql). The owner's own rows are
  // the owner policy's: reading them must not call it; and the recipient's shared list starts from
  // their shares (20261129000200_shared_list_by_shares.sql), so others' notes add no calls. Counted
  // with Postgres' own function statistics, as each person's session (role authenticated, its
  // claims) in SQL.
  interface Calls {
    note: number | null;
    owner: number | null;
  }

  async function helperCalls(person: Person, read: string, params: unknown[]) {
    const session = (await person.client.auth.getSession()).data.session;
    if (!session) throw new Error("no session");
    const claims = Buffer.from(session.access_token.split(".")[1] ?? "", "base64url").toString();
    const count = `select pg_stat_get_xact_function_calls('private.note_shared_with_me(uuid)'::regprocedure) as note,
                          pg_stat_get_xact_function_calls('private.shares_a_note_with_me(uuid)'::regprocedure) as owner`;
    return local.backend.db.transaction(async (tx) => {
      await tx.query("select set_config('track_functions', 'all', true)");
      await tx.query(
        `select set_config('role', 'authenticated', true),
                set_config('request.jwt.claims', $1, true)`,
        [claims],
      );
      // The counts are the session's since Postgres last reported them, which it does between
      // transactions only: the difference within this one is what the read did.
      const before = (await tx.query<Calls>(count)).rows[0];
      const result = (await tx.query<Record<string, unknown>>(read, params)).rows;
      const after = (await tx.query<Calls>(count)).rows[0];
      await tx.rollback();
      const calls = (key: keyof Calls) => (after?.[key] ?? 0) - (before?.[key] ?? 0);
      return { rows: result.length, first: result[0], note: calls("note"), owner: calls("owner") };
    });
  }

  test("the owner's notes and profile: no share lookup; the recipient's: the lookup lets them in", async () => {
    const w = await world();
    await world();
    const ownNotes = "select id from public.notes where owner_id = $1";
    const ownerProfile = "select id from public.profiles where id = $1";
    const owned = await helperCalls(owner, ownNotes, [owner.id]);
    expect(owned.rows).toBeGreaterThanOrEqual(2);
    expect(owned.note).toBe(0);
    expect(await helperCalls(owner, ownerProfile, [owner.id])).toMatchObject({ rows: 1, owner: 0 });
    // The same helpers count for the rows they decide: the recipient's shared note and its owner.
    const sharedNote = await helperCalls(recipient, "select id from public.notes where id = $1", [
      w.noteId,
    ]);
    expect(sharedNote.rows).toBe(1);
    expect(sharedNote.note).toBeGreaterThanOrEqual(1);
    const sharerProfile = await helperCalls(recipient, ownerProfile, [owner.id]);
    expect(sharerProfile.rows).toBe(1);
    expect(sharerProfile.owner).toBeGreaterThanOrEqual(1);
  });

  test("the recipient's shared list is found from their shares: others' notes add no work", async () => {
    const w = await world();
    const sharedList = "select public.list_notes(true, false, '', '', 0, 100) as list";
    const before = await helperCalls(recipient, sharedList, []);
    const listed = before.first?.list as { notes: { id: string }[] };
    expect(listed.notes.map((n) => n.id)).toContain(w.noteId);
    expect(before.note).toBeGreaterThanOrEqual(1);
    // Five notes of someone else's, shared with no one: the recipient's list does the same work.
    const more = await other.client
      .from("notes")
      .insert(Array.from({ length: 5 }, (_, i) => ({ title: `Not shared ${i}` })));
    expect(more.error).toBeNull();
    const after = await helperCalls(recipient, sharedList, []);
    expect((after.first?.list as { notes: unknown[] }).notes).toHaveLength(listed.notes.length);
    expect(after.note).toBe(before.note);
  });
});

describe("ended sessions without the pre-request: the restrictive policies alone", () => {
  /** The authenticator role's db_pre_request, as the migrations set it. */
  let preRequest: string;

  /** Waits until the data API has read the configuration (NOTIFY pgrst, 'reload config'). */
  async function untilEndedSessionGets(status: number) {
    for (let i = 0; i < 50; i++) {
      if ((await clients.ended.from("notes").select("id")).status === status) return;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    throw new Error(`the ended session never got ${status}`);
  }

  beforeAll(async () => {
    const { rows } = await local.backend.db.query<{ value: string }>(
      `select substr(s, length('pgrst.db_pre_request=') + 1) as value
       from pg_db_role_setting d, unnest(d.setconfig) s
       where d.setrole = 'authenticator'::regrole and s like 'pgrst.db_pre_request=%'`,
    );
    preRequest = rows[0]?.value ?? "";
    expect(preRequest).toBe("private.require_live_session");
    await untilEndedSessionGets(401);
    await local.backend.db.exec(`alter role authenticator reset pgrst.db_pre_request;
      notify pgrst, 'reload config';`);
    await untilEndedSessionGets(200);
  });

  afterAll(async () => {
    // This worker's later test files share the database: put the setting back.
    await local.backend.db.exec(`alter role authenticator set pgrst.db_pre_request = '${preRequest}';
      notify pgrst, 'reload config';`);
    await untilEndedSessionGets(401);
  });

  test.each(TABLES)("%s: the ended session reads nothing and writes nothing", async (table) => {
    const succeeded: Op[] = [];
    for (const op of ALL) if (await attempt(table, "ended", op)) succeeded.push(op);
    expect(succeeded).toEqual([]);
  });

  test("listing every table shows the ended session none of the owner's rows", async () => {
    await world();
    for (const table of [...TABLES, "security_events"] as const) {
      const columns = table === "note_shares" ? "note_id, owner_id, shared_with_email" : "*";
      const listed = await clients.ended.from(table).select(columns);
      expect(listed.status, table).toBe(200);
      expect(listed.data, table).toEqual([]);
    }
  });
});

describe("every app table carries the rules (from the catalogue)", () => {
  // realtime.messages too: its policies authorize the private live topics (live-topics.test.ts);
  // storage.objects: its policies guard the attachments bucket (attachments-rls-matrix.test.ts).
  test("RLS on, with restrictive policies for the aal2 rule, anonymous users and ended sessions", async () => {
    const { rows } = await local.backend.db.query<{ table: string; missing: string[] }>(
      `select format('%I.%I', n.nspname, c.relname) as table,
              array_remove(array[
                case when not c.relrowsecurity then 'row level security' end,
                case when not exists (
                  select 1 from pg_policies p
                  where p.schemaname = n.nspname and p.tablename = c.relname
                    and p.permissive = 'RESTRICTIVE' and p.cmd = 'ALL'
                    and p.roles @> array['authenticated']::name[]
                    and p.qual like '%private.aal_satisfied()%'
                    and p.with_check like '%private.aal_satisfied()%'
                ) then 'aal2 rule' end,
                case when not exists (
                  select 1 from pg_policies p
                  where p.schemaname = n.nspname and p.tablename = c.relname
                    and p.permissive = 'RESTRICTIVE' and p.cmd = 'ALL'
                    and p.roles @> array['authenticated']::name[]
                    and p.qual like '%is_anonymous%' and p.with_check like '%is_anonymous%'
                ) then 'anonymous users' end,
                case when not exists (
                  select 1 from pg_policies p
                  where p.schemaname = n.nspname and p.tablename = c.relname
                    and p.permissive = 'RESTRICTIVE' and p.cmd = 'ALL'
                    and p.roles @> array['authenticated']::name[]
                    and p.qual like '%( SELECT private.session_is_alive() AS session_is_alive)%'
                    and p.with_check like '%( SELECT private.session_is_alive() AS session_is_alive)%'
                ) then 'ended sessions' end
              ], null) as missing
       from pg_class c join pg_namespace n on n.oid = c.relnamespace
       where c.relkind in ('r', 'p')
         and (n.nspname = any($1) or (n.nspname = 'realtime' and c.relname = 'messages')
              or (n.nspname = 'storage' and c.relname = 'objects'))
       order by 1`,
      [local.backend.config.api.schemas],
    );
    // A floor, so a query that finds nothing cannot pass.
    expect(rows.map((r) => r.table)).toEqual(
      expect.arrayContaining([
        ...TABLES.map((t) => `public.${t}`),
        "public.security_events",
        "public.attachments",
        "realtime.messages",
        "storage.objects",
      ]),
    );
    expect(rows.filter((r) => r.missing.length > 0)).toEqual([]);
  });
});
