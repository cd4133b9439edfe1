// The notes schema's rules (supabase/migrations/20261122000100..0400, 20261128011000), through the
// real clients against the test backend: profiles made by an Auth trigger and then written by their
// owner, username rules, note limits, an owner that cannot be changed, updated_at, tags, sharing by
// email, full-text search.
import { beforeAll, describe, expect, test } from "vitest";
import { adminClient, freshUser, randomEmail, signedInClient } from "../support/backend.ts";

type Signed = Awaited<ReturnType<typeof signedInClient>>;
let alice: Signed;
let bob: Signed;

beforeAll(async () => {
  [alice, bob] = await Promise.all([signedInClient(), signedInClient()]);
});

async function note(who: Signed, fields: Record<string, unknown> = {}) {
  const { data, error } = await who.client
    .from("notes")
    .insert({ title: "A note", ...fields })
    .select()
    .single();
  if (error) throw error;
  return data as { id: string; owner_id: string; created_at: string; updated_at: string };
}

describe("profiles", () => {
  test("a profile is created on sign-up, with the display name from user metadata", async () => {
    const user = await freshUser({ metadata: { display_name: "  Ada Lovelace  " } });
    const { data } = await adminClient()
      .from("profiles")
      .select("username, display_name")
      .eq("id", user.user.id)
      .single();
    expect(data).toEqual({ username: null, display_name: "Ada Lovelace" });
  });

  test("the owner writes the display name through the API; user metadata is no longer copied", async () => {
    const { client, user } = await signedInClient();
    const read = () => client.from("profiles").select("display_name").eq("id", user.id).single();
    const set = (display_name: string | null) =>
      client.from("profiles").update({ display_name }).eq("id", user.id);
    expect((await set("Grace")).error).toBeNull();
    expect((await read()).data).toEqual({ display_name: "Grace" });
    // Auth takes any metadata from any session: the profile keeps what the owner wrote.
    expect((await client.auth.updateUser({ data: { display_name: "Metadata" } })).error).toBeNull();
    expect((await read()).data).toEqual({ display_name: "Grace" });
    expect((await set(null)).error).toBeNull();
    expect((await read()).data).toEqual({ display_name: null });
  });

  test("odd metadata never breaks Auth, and never reaches the profile", async () => {
    const { client, user } = await signedInClient();
    const read = async () =>
      (await client.from("profiles").select("display_name").eq("id", user.id).single()).data
        ?.display_name;
    for (const value of [{ nested: true }, 42, "   ", "x".repeat(300)]) {
      const { error } = await client.auth.updateUser({ data: { display_name: value } });
      expect(error).toBeNull();
      expect(await read()).toBeNull();
    }
  });

  test("deleting a user deletes their profile and notes", async () => {
    // (Anonymous users get a profile too, but reach none of it: packages/supabase-local/test/auth/anonymous.test.ts.)
    const { client, user } = await signedInClient();
    const id = user.id;
    expect((await client.from("profiles").select("id").eq("id", id)).data).toEqual([{ id }]);
    const n = await client.from("notes").insert({ title: "a note" }).select("id").single();
    expect(n.error).toBeNull();
    const admin = adminClient();
    expect((await admin.auth.admin.deleteUser(id)).error).toBeNull();
    expect((await admin.from("profiles").select("id").eq("id", id)).data).toEqual([]);
    expect((await admin.from("notes").select("id").eq("id", n.data?.id)).data).toEqual([]);
  });

  test("usernames: 3–30 of a-z 0-9 _, unique; the row's other columns cannot be written", async () => {
    const { client, user } = await signedInClient();
    const set = (username: string) =>
      client.from("profiles").update({ username }).eq("id", user.id).select("username");
    for (const bad of ["ab", "x".repeat(31), "Has Caps", "dash-name", "ünï", "a;drop"]) {
      const r = await set(bad);
      expect(r.status, bad).toBe(400);
      expect(r.error?.code, bad).toBe("23514");
    }
    const name = `u_${crypto.randomUUID().slice(0, 8)}`;
    expect((await set(name)).data).toEqual([{ username: name }]);
    const taken = await alice.client
      .from("profiles")
      .update({ username: name })
      .eq("id", alice.user.id);
    expect(taken.status).toBe(409);
    expect(taken.error?.code).toBe("23505");
    const direct = await client
      .from("profiles")
      .update({ created_at: "2000-01-01T00:00:00Z" })
      .eq("id", user.id);
    expect(direct.status).toBe(403);
    expect(direct.error?.code).toBe("42501");
  });
});

describe("notes", () => {
  test("title 1–200 characters (not only spaces), body up to 20 000", async () => {
    const invalid: { title: string; body?: string }[] = [
      { title: "" },
      { title: "   " },
      { title: "t".repeat(201) },
      { title: "ok", body: "b".repeat(20_001) },
    ];
    for (const fields of invalid) {
      const r = await alice.client.from("notes").insert(fields);
      expect(r.status).toBe(400);
      expect(r.error?.code).toBe("23514");
    }
    const max = await note(alice, { title: "t".repeat(200), body: "b".repeat(20_000) });
    expect(max.owner_id).toBe(alice.user.id);
  });

  test("the owner cannot be set or changed by a user, nor the timestamps", async () => {
    const mine = await note(alice);
    for (const fields of [
      { owner_id: bob.user.id },
      { created_at: "2000-01-01T00:00:00Z" },
      { updated_at: "2000-01-01T00:00:00Z" },
    ]) {
      const r = await alice.client.from("notes").update(fields).eq("id", mine.id);
      expect(r.status).toBe(403);
      expect(r.error?.code).toBe("42501");
    }
    const planted = await alice.client
      .from("notes")
      .insert({ title: "for bob", owner_id: bob.user.id });
    expect(planted.status).toBe(403);
    const { data } = await adminClient()
      .from("notes")
      .select("owner_id")
      .eq("id", mine.id)
      .single();
    expect(data?.owner_id).toBe(alice.user.id);
  });

  test("updated_at moves when the title or body changes, not when pinned or archived", async () => {
    const created = await note(alice);
    const read = async () =>
      (await alice.client.from("notes").select("updated_at").eq("id", created.id).single()).data
        ?.updated_at as string;
    await alice.client.from("notes").update({ pinned: true, archived: true }).eq("id", created.id);
    expect(await read()).toBe(created.updated_at);
    await alice.client.from("notes").update({ body: "changed" }).eq("id", created.id);
    expect(Date.parse(await read())).toBeGreaterThan(Date.parse(created.updated_at));
  });

  test("websearch full text: words, phrases, negation; hostile strings are plain text", async () => {
    const tag = crypto.randomUUID().slice(0, 8);
    await note(alice, { title: `Quarterly budget ${tag}`, body: "Spreadsheets and forecasts" });
    await note(alice, { title: `Holiday plans ${tag}`, body: "Budget for the trip" });
    const search = async (q: string) => {
      const r = await alice.client
        .from("notes")
        .select("title")
        .textSearch("search", `${q} ${tag}`, { type: "websearch", config: "english" })
        .order("title");
      expect(r.status, q).toBeLessThan(300);
      return (r.data ?? []).map((n) => n.title.replace(` ${tag}`, ""));
    };
    expect(await search("budget")).toEqual(["Holiday plans", "Quarterly budget"]);
    expect(await search("forecast")).toEqual(["Quarterly budget"]);
    expect(await search("budget -trip")).toEqual(["Quarterly budget"]);
    expect(await search('"holiday plans"')).toEqual(["Holiday plans"]);
    for (const hostile of [
      "'; drop table notes; --",
      "a,b),or=(title.eq.x",
      "*:*",
      "title:*",
      '"unclosed',
      "& | ! <-> ()",
      "\\",
      "%00",
      "budget:A",
    ]) {
      await search(hostile);
    }
  });
});

describe("tags", () => {
  test("set_note_tags replaces a note's tags, drops tags left on no note, refuses bad names", async () => {
    const n = await note(alice);
    const set = (names: string[], id = n.id, who = alice) =>
      who.client.rpc("set_note_tags", { note_id: id, tag_names: names });
    const a = `a${crypto.randomUUID().slice(0, 6)}`;
    const b = `b${crypto.randomUUID().slice(0, 6)}`;
    expect((await set([a, b, a])).data?.map((t: { name: string }) => t.name)).toEqual([a, b]);
    expect((await set([b])).data?.map((t: { name: string }) => t.name)).toEqual([b]);
    const left = await alice.client.from("tags").select("name").in("name", [a, b]);
    expect(left.data).toEqual([{ name: b }]);
    const bad = await set(["Not Valid"]);
    expect(bad.status).toBe(400);
    expect(bad.error?.code).toBe("23514");
    // Someone else's note and a note that does not exist: the same 404.
    const theirs = await set([a], n.id, bob);
    const missing = await set([a], crypto.randomUUID(), bob);
    expect(theirs.status).toBe(404);
    expect(missing.status).toBe(404);
    expect(theirs.error?.message).toBe(missing.error?.message);
  });
});

describe("share_note", () => {
  test("outcomes: shared, already shared, own email, unknown email; 404 for others' notes", async () => {
    const n = await note(alice);
    const share = (email: string, who = alice, id = n.id) =>
      who.client.rpc("share_note", { note_id: id, email });
    expect((await share(`  ${bob.email.toUpperCase()} `)).data).toBe("shared");
    expect((await share(bob.email)).data).toBe("already_shared");
    expect((await share(alice.email)).data).toBe("own_email");
    expect((await share(randomEmail())).data).toBe("unknown_email");
    const theirs = await share(alice.email, bob, n.id);
    const missing = await share(alice.email, bob, crypto.randomUUID());
    expect([theirs.status, missing.status]).toEqual([404, 404]);
    expect(theirs.error?.message).toBe(missing.error?.message);
    // The recipient reads, cannot write, and sees the owner's profile.
    const read = await bob.client.from("notes").select("id, title").eq("id", n.id);
    expect(read.data).toEqual([{ id: n.id, title: "A note" }]);
    const write = await bob.client
      .from("notes")
      .update({ title: "mine now" })
      .eq("id", n.id)
      .select();
    expect(write.data).toEqual([]);
    const owner = await bob.client.from("profiles").select("id").eq("id", alice.user.id);
    expect(owner.data).toEqual([{ id: alice.user.id }]);
    // Revoked by the address it is listed under: gone for the recipient.
    // (Without a representation: PostgREST would return the primary key, shared_with included.)
    const revoked = await alice.client
      .from("note_shares")
      .delete({ count: "exact" })
      .match({ note_id: n.id, shared_with_email: bob.email });
    expect([revoked.error, revoked.count]).toEqual([null, 1]);
    expect((await bob.client.from("notes").select("id").eq("id", n.id)).data).toEqual([]);
  });

  test("unconfirmed addresses are unknown; anon cannot call it", async () => {
    const unconfirmed = randomEmail();
    await adminClient().auth.admin.createUser({ email: unconfirmed, password: "pw-123456789" });
    const n = await note(alice);
    expect((await alice.client.rpc("share_note", { note_id: n.id, email: unconfirmed })).data).toBe(
      "unknown_email",
    );
    const { anonClient } = await import("../support/backend.ts");
    const anon = await anonClient().rpc("share_note", { note_id: n.id, email: bob.email });
    expect(anon.status).toBe(401);
  });

  test("the owner never sees a recipient's id; recipients see only their own share", async () => {
    const carol = await signedInClient();
    await carol.client
      .from("profiles")
      .update({ display_name: "Carol Reader" })
      .eq("id", carol.user.id);
    const n = await note(alice);
    for (const who of [bob, carol]) {
      const shared = await alice.client.rpc("share_note", { note_id: n.id, email: who.email });
      expect(shared.data).toBe("shared");
    }
    // The column is not selectable, not even to filter on, by anyone through the API.
    for (const who of [alice, bob, carol]) {
      const column = await who.client.from("note_shares").select("shared_with");
      expect([column.status, column.error?.code]).toEqual([403, "42501"]);
      const star = await who.client.from("note_shares").select("*");
      expect([star.status, star.error?.code]).toEqual([403, "42501"]);
      const filter = await who.client
        .from("note_shares")
        .select("note_id")
        .eq("shared_with", bob.user.id);
      expect([filter.status, filter.error?.code]).toEqual([403, "42501"]);
      const embed = await who.client
        .from("note_shares")
        .select("note_id, profiles!note_shares_shared_with_fkey(id)");
      expect(embed.status).toBeGreaterThanOrEqual(400);
      expect(embed.status).toBeLessThan(500);
    }
    // The owner's list: the addresses typed and the names, no ids anywhere.
    const listed = await alice.client
      .rpc("list_note_shares", { note_id: n.id })
      .select("email, display_name, username, created_at");
    expect(listed.error).toBeNull();
    const shares = (listed.data ?? []) as unknown as Record<string, unknown>[];
    expect(shares.map(({ email, display_name }) => ({ email, display_name }))).toEqual([
      { email: bob.email, display_name: null },
      { email: carol.email, display_name: "Carol Reader" },
    ]);
    expect(Object.keys(shares[0] ?? {}).sort()).toEqual([
      "created_at",
      "display_name",
      "email",
      "username",
    ]);
    const text = JSON.stringify(listed.data);
    expect(text).not.toContain(bob.user.id);
    expect(text).not.toContain(carol.user.id);
    // Nor through the recipients' profiles: the owner does not read them.
    const profiles = await alice.client
      .from("profiles")
      .select("id")
      .in("id", [bob.user.id, carol.user.id]);
    expect(profiles.data).toEqual([]);
    const rows = await alice.client
      .from("note_shares")
      .select("note_id, owner_id, shared_with_email, created_at")
      .eq("note_id", n.id);
    expect(JSON.stringify(rows.data)).not.toContain(bob.user.id);
    expect(rows.data).toHaveLength(2);
    // Someone else's note: 404, like a missing one.
    const notTheirs = await bob.client.rpc("list_note_shares", { note_id: n.id });
    expect([notTheirs.status, notTheirs.error?.code]).toEqual([404, "PT404"]);
    // A recipient sees their own share only (not the other recipient), and can remove it.
    const own = await bob.client.from("note_shares").select("note_id, shared_with_email");
    expect(own.data).toEqual([{ note_id: n.id, shared_with_email: bob.email }]);
    const left = await bob.client
      .from("note_shares")
      .delete({ count: "exact" })
      .eq("note_id", n.id);
    expect([left.error, left.count]).toEqual([null, 1]);
    expect((await bob.client.from("notes").select("id").eq("id", n.id)).data).toEqual([]);
    expect((await carol.client.from("notes").select("id").eq("id", n.id)).data).toHaveLength(1);
  });

  test("more than 20 unknown addresses an hour: too_many_attempts, even for real ones", async () => {
    const carol = await signedInClient();
    const n = await note(carol);
    for (let i = 0; i < 20; i++) {
      const r = await carol.client.rpc("share_note", { note_id: n.id, email: randomEmail() });
      expect(r.data).toBe("unknown_email");
    }
    const r = await carol.client.rpc("share_note", { note_id: n.id, email: bob.email });
    expect(r.data).toBe("too_many_attempts");
  });
});

describe("list_notes", () => {
  const list = (who: Signed, args: Partial<Record<string, unknown>> = {}) =>
    who.client.rpc("list_notes", {
      shared_with_me: false,
      archived_view: false,
      search_words: "",
      tag_name: "",
      page_offset: 0,
      page_size: 20,
      ...args,
    }) as unknown as Promise<{
      data: {
        total: number;
        tags: string[];
        notes: { title: string; tags: { name: string }[]; owner: unknown }[];
      } | null;
      error: { code: string } | null;
    }>;
  const titles = (page: { notes: { title: string }[] } | null) => page?.notes.map((n) => n.title);

  test("one page, its total and the caller's tags; the caller's RLS decides every row", async () => {
    const [dana, erin] = await Promise.all([signedInClient(), signedInClient()]);
    const first = await note(dana, { title: "Dana's first", body: "quince jam" });
    const second = await note(dana, { title: "Dana's second", pinned: true });
    await note(dana, { title: "Dana's archived", archived: true });
    await note(erin, { title: "Erin's own" });
    for (const [id, names] of [
      [first.id, ["kitchen", "b-list"]],
      [second.id, ["kitchen"]],
    ] as const) {
      const tagged = await dana.client.rpc("set_note_tags", { note_id: id, tag_names: [...names] });
      expect(tagged.error).toBeNull();
    }
    expect(
      (
        await erin.client.rpc("set_note_tags", {
          note_id: (await note(erin)).id,
          tag_names: ["erins"],
        })
      ).error,
    ).toBeNull();

    // Pinned first; each note's tags by name; the owner's profile; the caller's tags only.
    const own = (await list(dana)).data;
    expect(titles(own)).toEqual(["Dana's second", "Dana's first"]);
    expect(own?.total).toBe(2);
    expect(own?.notes[1]?.tags).toEqual([{ name: "b-list" }, { name: "kitchen" }]);
    expect(own?.notes[0]?.owner).toEqual({ username: null, display_name: null, avatar_path: null });
    expect(own?.tags).toEqual(["b-list", "kitchen"]);
    expect(titles((await list(dana, { archived_view: true })).data)).toEqual(["Dana's archived"]);
    expect(titles((await list(dana, { search_words: "quince" })).data)).toEqual(["Dana's first"]);
    expect(titles((await list(dana, { tag_name: "b-list" })).data)).toEqual(["Dana's first"]);
    // Someone else's tag filters to nothing; a page past the end is empty, with the total.
    expect(titles((await list(dana, { tag_name: "erins" })).data)).toEqual([]);
    const past = (await list(dana, { page_offset: 40 })).data;
    expect([past?.notes, past?.total]).toEqual([[], 2]);

    // Shared with Erin: she sees the note and who shared it, never Dana's tags.
    const shared = await dana.client.rpc("share_note", { note_id: first.id, email: erin.email });
    expect(shared.data).toBe("shared");
    const theirs = (await list(erin, { shared_with_me: true })).data;
    expect(titles(theirs)).toEqual(["Dana's first"]);
    expect(theirs?.notes[0]?.tags).toEqual([]);
    expect(theirs?.tags).toEqual([]);
    expect(theirs?.notes[0]?.owner).not.toBeNull();
    // Her own list stays hers, with her tags.
    const hers = (await list(erin)).data;
    expect(titles(hers)).not.toContain("Dana's first");
    expect(hers?.tags).toEqual(["erins"]);
  });

  test("a page holds at most 100 notes: a larger one is refused, not built", async () => {
    const fay = await signedInClient();
    await note(fay, { title: "Fay's only" });
    for (const page_size of [101, 1_000_000, -1]) {
      const refused = await list(fay, { page_size });
      expect(refused.data).toBeNull();
      expect(refused.error).toMatchObject({
        code: "22023",
        message: "page_size must be between 0 and 100",
      });
    }
    expect(titles((await list(fay, { page_size: 100 })).data)).toEqual(["Fay's only"]);
  });
});
