// What other people see of a user (their profile's display name and picture) changes only through
// the data API, under the profile's row-level security: aal2 once the user has a factor
// (supabase/migrations/20261128011000_profiles_written_at_aal2.sql, decision 004). Auth lets any
// session, aal1 included, rewrite its own user metadata (hosted Supabase does, and that cannot be
// changed), so nothing copies the metadata into the profile after sign-up any more.
//
// The owner has a verified TOTP factor: "owner" is their aal2 session, "aal1" the same user signed
// in with the password only. "partner" reads the owner's profile (a note of the owner's is shared
// with them) and lists the shares of a note of theirs shared with the owner, which shows the
// owner's name. Every answer is judged by what the owner's aal2 session and the partner read back.
import type { SupabaseClient } from "@supabase/supabase-js";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { PASSWORD } from "../support/backend.ts";
import { type MemoryBackend, memoryBackend } from "../support/memory-backend.ts";
import { aalOf, enrollVerifiedTotp } from "../support/mfa.ts";

let local: MemoryBackend;
let service: SupabaseClient;
let owner: { id: string; email: string; client: SupabaseClient };
let aal1: SupabaseClient;
let partner: { id: string; client: SupabaseClient };
let partnersNote: string;

beforeAll(async () => {
  local = await memoryBackend({});
  service = local.admin();
  const [o, p] = await Promise.all([local.signedIn(), local.signedIn()]);
  owner = { id: o.user.id, email: o.email, client: o.client };
  partner = { id: p.user.id, client: p.client };
  await enrollVerifiedTotp(owner.client);
  // (After the factor is verified: verifying it ends the user's aal1 sessions.)
  aal1 = local.client();
  const signIn = await aal1.auth.signInWithPassword({ email: o.email, password: PASSWORD });
  if (signIn.error) throw signIn.error;
  expect([await aalOf(owner.client), await aalOf(aal1)]).toEqual(["aal2", "aal1"]);
  // Both directions of sharing: the partner reads the owner's profile, and lists the owner by
  // name among the people a note of theirs is shared with.
  const note = await owner.client.from("notes").insert({ title: "Owner's" }).select("id").single();
  expect(
    (await owner.client.rpc("share_note", { note_id: note.data?.id, email: p.email })).data,
  ).toBe("shared");
  const theirs = await partner.client
    .from("notes")
    .insert({ title: "Partner's" })
    .select("id")
    .single();
  partnersNote = theirs.data?.id;
  expect(
    (await partner.client.rpc("share_note", { note_id: partnersNote, email: o.email })).data,
  ).toBe("shared");
}, 60_000);

afterAll(() => local?.close());

const picture = (userId: string) =>
  `${userId}/${Date.now().toString(36)}-${crypto.randomUUID().slice(0, 8)}.webp`;

/** The owner's profile as their aal2 session, the partner (directly, and in a list of shares). */
async function seen() {
  const own = await owner.client
    .from("profiles")
    .select("display_name, avatar_path")
    .eq("id", owner.id)
    .single();
  const byPartner = await partner.client
    .from("profiles")
    .select("display_name, avatar_path")
    .eq("id", owner.id)
    .single();
  const listed = await partner.client.rpc("list_note_shares", { note_id: partnersNote });
  expect([own.error, byPartner.error, listed.error]).toEqual([null, null, null]);
  const shares = (listed.data ?? []) as { display_name: string | null }[];
  return { own: own.data, partner: byPartner.data, listed: shares.map((s) => s.display_name) };
}

/** The same profile seen three times over. */
const everywhere = (display_name: string | null, avatar_path: string | null) => ({
  own: { display_name, avatar_path },
  partner: { display_name, avatar_path },
  listed: [display_name],
});

describe("a user with a second factor, signed in with the password only", () => {
  test("changes their metadata through Auth: what they and their share partners see stays", async () => {
    const path = picture(owner.id);
    const set = await service
      .from("profiles")
      .update({ display_name: "Ada at aal2", avatar_path: path })
      .eq("id", owner.id);
    expect(set.error).toBeNull();
    expect(await seen()).toEqual(everywhere("Ada at aal2", path));

    // Auth takes it (any session may edit its own user metadata, as on hosted Supabase)...
    const changed = await aal1.auth.updateUser({
      data: { display_name: "Changed at aal1", avatar_path: null },
    });
    expect(changed.error).toBeNull();
    expect(changed.data.user?.user_metadata.display_name).toBe("Changed at aal1");
    // ...and no one else sees it.
    expect(await seen()).toEqual(everywhere("Ada at aal2", path));

    // Nor another picture of theirs.
    const other = picture(owner.id);
    expect((await aal1.auth.updateUser({ data: { avatar_path: other } })).error).toBeNull();
    expect(await seen()).toEqual(everywhere("Ada at aal2", path));
  });

  test("cannot write the profile through the data API either", async () => {
    const before = await seen();
    for (const fields of [
      { display_name: "Changed at aal1" },
      { avatar_path: null },
      { avatar_path: picture(owner.id) },
      { username: `aal1_${crypto.randomUUID().slice(0, 8)}` },
    ]) {
      const r = await aal1.from("profiles").update(fields).eq("id", owner.id);
      expect(r.status ?? 200, JSON.stringify(fields)).toBeLessThan(500);
    }
    expect(await seen()).toEqual(before);
  });
});

describe("the profile's owner at aal2, and users without a factor", () => {
  test("an aal2 session's new name and picture reach its share partners", async () => {
    const path = picture(owner.id);
    const saved = await owner.client
      .from("profiles")
      .update({ display_name: "Ada Lovelace", avatar_path: path })
      .eq("id", owner.id)
      .select("display_name, avatar_path");
    expect(saved.error).toBeNull();
    expect(saved.data).toEqual([{ display_name: "Ada Lovelace", avatar_path: path }]);
    expect(await seen()).toEqual(everywhere("Ada Lovelace", path));
    const cleared = await owner.client
      .from("profiles")
      .update({ display_name: null, avatar_path: null })
      .eq("id", owner.id);
    expect(cleared.error).toBeNull();
    expect(await seen()).toEqual(everywhere(null, null));
  });

  test("without a factor, the password session writes its own profile, and only its own", async () => {
    const { client, user } = await local.signedIn();
    expect(await aalOf(client)).toBe("aal1");
    const path = picture(user.id);
    const own = await client
      .from("profiles")
      .update({ display_name: "Grace", avatar_path: path })
      .eq("id", user.id)
      .select("display_name, avatar_path");
    expect(own.data).toEqual([{ display_name: "Grace", avatar_path: path }]);
    // Someone else's row: no row matches.
    const theirs = await client
      .from("profiles")
      .update({ display_name: "Grace was here" })
      .eq("id", partner.id)
      .select("id");
    expect(theirs.data).toEqual([]);
    const partnerName = await service
      .from("profiles")
      .select("display_name")
      .eq("id", partner.id)
      .single();
    expect(partnerName.data?.display_name).not.toBe("Grace was here");
  });

  test("the database checks what is written: a trimmed name of 1–100 characters, a picture of one's own", async () => {
    const { client, user } = await local.signedIn();
    for (const fields of [
      { display_name: "" },
      { display_name: "   " },
      { display_name: " Padded" },
      { display_name: "x".repeat(101) },
      { avatar_path: picture(partner.id) },
      { avatar_path: `${user.id}/nested/${picture(user.id).split("/")[1]}` },
      { avatar_path: `${user.id}/x.svg` },
    ]) {
      const r = await client.from("profiles").update(fields).eq("id", user.id);
      expect(r.error?.code, JSON.stringify(fields)).toBe("23514");
    }
    const row = await service
      .from("profiles")
      .select("display_name, avatar_path, created_at")
      .eq("id", user.id)
      .single();
    expect([row.data?.display_name, row.data?.avatar_path]).toEqual([null, null]);
    // Only the name, the picture and the username are the user's to write.
    const created = await client
      .from("profiles")
      .update({ created_at: "2000-01-01T00:00:00Z" })
      .eq("id", user.id);
    expect(created.error?.code).toBe("42501");
  });
});
