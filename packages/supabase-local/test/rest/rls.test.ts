// Row-level security through the data API: anon, two signed-in users (isolation both ways),
// service_role, and what an invalid or expired JWT gets.
import type { SupabaseClient } from "@supabase/supabase-js";
import { beforeAll, describe, expect, test } from "vitest";
import { backend, sign } from "./support/backend.ts";

let alice: { id: string; client: SupabaseClient };
let bob: { id: string; client: SupabaseClient };
let anon: SupabaseClient;
let service: SupabaseClient;
let aliceNote: number;
let bobNote: number;

beforeAll(async () => {
  const b = await backend();
  alice = await b.user();
  bob = await b.user();
  anon = b.client();
  service = b.client(b.serviceKey);
  aliceNote = (
    await alice.client.from("rest_notes").insert({ title: "alice secret" }).select("id").single()
  ).data?.id as number;
  bobNote = (
    await bob.client.from("rest_notes").insert({ title: "bob secret" }).select("id").single()
  ).data?.id as number;
  await alice.client.from("rest_comments").insert({ note_id: aliceNote, text: "alice comment" });
});

const mine = async (c: SupabaseClient) =>
  ((await c.from("rest_notes").select("id, owner").in("id", [aliceNote, bobNote])).data ?? []) as {
    id: number;
    owner: string;
  }[];

describe.each([
  ["alice", () => alice, () => aliceNote, () => bobNote],
  ["bob", () => bob, () => bobNote, () => aliceNote],
])("signed in as %s", (_name, who, own, other) => {
  test("reads only their own rows, embedded or not", async () => {
    expect(await mine(who().client)).toEqual([{ id: own(), owner: who().id }]);
    const embedded = await who()
      .client.from("rest_profiles")
      .select("id, rest_notes(id)")
      .in("id", [alice.id, bob.id]);
    for (const p of embedded.data as { id: string; rest_notes: { id: number }[] }[])
      expect(p.rest_notes.map((n) => n.id)).toEqual(p.id === who().id ? [own()] : []);
  });

  test("cannot update, delete or comment on the other's rows", async () => {
    const u = await who()
      .client.from("rest_notes")
      .update({ title: "pwned" })
      .eq("id", other())
      .select();
    expect(u).toMatchObject({ data: [], error: null });
    const d = await who().client.from("rest_notes").delete().eq("id", other()).select();
    expect(d).toMatchObject({ data: [], error: null });
    const c = await who().client.from("rest_comments").select("text").eq("note_id", other());
    expect(c.data).toEqual([]);
    const stolen = await who()
      .client.from("rest_notes")
      .insert({ title: "as other", owner: other() === aliceNote ? alice.id : bob.id });
    expect(stolen.status).toBe(403);
    expect(stolen.error?.code).toBe("42501");
    expect(
      (await service.from("rest_notes").select("title").eq("id", other()).single()).data,
    ).toEqual({
      title: other() === aliceNote ? "alice secret" : "bob secret",
    });
  });

  test("rpc runs with their identity", async () => {
    const { data } = await who().client.rpc("rest_whoami");
    expect(data).toEqual({ uid: who().id, role: "authenticated", claims_role: "authenticated" });
    const count = await who().client.rpc("rest_count_notes");
    expect(count.data).toBe(1);
  });
});

describe("anon", () => {
  test("sees public rows only and cannot write", async () => {
    expect(await mine(anon)).toEqual([]);
    expect((await anon.from("rest_labels").select("name").eq("id", 2)).data).toEqual([
      { name: "home" },
    ]);
    const w = await anon.from("rest_notes").insert({ title: "anon" });
    expect(w.status).toBe(401);
    expect(w.error?.code).toBe("42501");
    const who = await anon.rpc("rest_whoami");
    expect(who.data).toEqual({ uid: null, role: "anon", claims_role: "anon" });
  });
});

describe("service_role", () => {
  test("bypasses RLS", async () => {
    const rows = await mine(service);
    expect(rows.map((r) => r.id).sort()).toEqual([aliceNote, bobNote].sort());
  });
});

describe("JWTs", () => {
  test("expired is 401 PGRST303, never a silent anon", async () => {
    const b = await backend();
    const expired = await sign({ sub: alice.id, role: "authenticated" }, "-1m");
    const r = await b.client(expired).from("rest_labels").select();
    expect(r.status).toBe(401);
    expect(r.error).toEqual({
      code: "PGRST303",
      details: null,
      hint: null,
      message: "JWT expired",
    });
  });

  test("forged is 401 PGRST301 with WWW-Authenticate", async () => {
    const b = await backend();
    const res = await b.fetch(`${b.url}/rest/v1/rest_labels`, {
      headers: {
        apikey: b.anonKey,
        Authorization: "Bearer eyJhbGciOiJIUzI1NiJ9.eyJyb2xlIjoic2VydmljZV9yb2xlIn0.bad",
      },
    });
    expect(res.status).toBe(401);
    expect((await res.json()).code).toBe("PGRST301");
    expect(res.headers.get("www-authenticate")).toMatch(/^Bearer error="invalid_token"/);
  });

  test("a database error answered 401 carries WWW-Authenticate: Bearer, as PostgREST's", async () => {
    const b = await backend();
    // anon has no privilege on the app's notes: 42501, which PostgREST answers 401 for anon
    const res = await b.fetch(`${b.url}/rest/v1/notes?select=id`, {
      headers: { apikey: b.anonKey },
    });
    expect(res.status).toBe(401);
    expect((await res.json()).code).toBe("42501");
    expect(res.headers.get("www-authenticate")).toBe("Bearer");
  });

  test("a role other than anon/authenticated/service_role is refused", async () => {
    const b = await backend();
    const r = await b
      .client(await sign({ role: "postgres" }))
      .from("rest_labels")
      .select();
    // PostgREST: SET ROLE fails, 42501 (403) for an existing role it may not use, 22023 (401)
    // when the server refuses it up front as a role that does not exist
    expect([401, 403]).toContain(r.status);
    expect(["42501", "22023"]).toContain(r.error?.code);
    expect(r.data).toBeNull();
  });
});
