// Attachments (supabase/migrations/20261128001000_attachments.sql) as a matrix, through the real
// supabase-js and storage-js with real session tokens: for the `attachments` bucket and table ×
// {anon, owner, the owner's aal1 session, a session of the owner's that was ended, a stranger, the
// note's recipient, an anonymous user},
// exactly which operations succeed on the owner's files. "Succeeded" is judged by the service role
// afterwards (the object is there, or gone, or changed), so a 200 with nothing done counts as
// refused, and no cell may answer 5xx. The owner has a verified TOTP factor: "owner" is their aal2
// session, "aal1" the same user signed in with the password only, "ended" another aal2 session of
// theirs that signed out (decision 023: Storage runs as the caller, so the restrictive policy on
// storage.objects refuses it at once).
import type { SupabaseClient } from "@supabase/supabase-js";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { PASSWORD } from "../support/backend.ts";
import { signedOutSession } from "../support/ended-session.ts";
import { type MemoryBackend, memoryBackend } from "../support/memory-backend.ts";
import { aalOf, enrollVerifiedTotp } from "../support/mfa.ts";

type Actor = "anon" | "owner" | "aal1" | "ended" | "stranger" | "recipient" | "anonymous";
type Op =
  | "upload"
  | "replace"
  | "download"
  | "list"
  | "signed url"
  | "remove"
  | "row select"
  | "row insert"
  | "row delete";

const BUCKET = "attachments";
const WRITES: Op[] = ["upload", "replace", "remove", "row insert", "row delete"];
const READS: Op[] = ["download", "list", "signed url", "row select"];
const OPS: Op[] = [...READS, ...WRITES];

/** The whole policy: the owner writes; the owner and the note's readers read; nobody else. */
const EXPECTED: Record<Actor, Op[]> = {
  anon: [],
  owner: OPS,
  aal1: [],
  ended: [],
  stranger: [],
  recipient: READS,
  anonymous: [],
};

let local: MemoryBackend;
let owner: { id: string; client: SupabaseClient };
let recipient: { id: string; email: string; client: SupabaseClient };
let stranger: SupabaseClient;
let service: SupabaseClient;
let clients: Record<Actor, SupabaseClient>;

beforeAll(async () => {
  local = await memoryBackend({ auth: { enableAnonymousSignIns: true } });
  const [o, r, s] = await Promise.all([local.signedIn(), local.signedIn(), local.signedIn()]);
  owner = { id: o.user.id, client: o.client };
  recipient = { id: r.user.id, email: r.email, client: r.client };
  stranger = s.client;
  const totp = await enrollVerifiedTotp(owner.client);
  // (Before the aal1 sign-in: verifying a factor ends the user's aal1 sessions.)
  const ended = await signedOutSession(local, o.email, totp);
  const aal1 = local.client();
  const signIn = await aal1.auth.signInWithPassword({ email: o.email, password: PASSWORD });
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
    stranger,
    recipient: recipient.client,
    anonymous,
  };
}, 60_000);

afterAll(() => local?.close());

const PNG = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 1, 2, 3]);

/** A note of the owner's, shared with the recipient, with one file (row and object). */
async function world() {
  const note = await owner.client
    .from("notes")
    .insert({ title: "With a file" })
    .select("id")
    .single();
  if (note.error) throw note.error;
  const shared = await owner.client.rpc("share_note", {
    note_id: note.data.id,
    email: recipient.email,
  });
  if (shared.data !== "shared") throw new Error(`share: ${JSON.stringify(shared)}`);
  const file = await addFile(owner.client, note.data.id);
  return { noteId: note.data.id, ...file };
}

/** An attachment row on `noteId` as `client`, then its object: the app's two steps. */
async function addFile(client: SupabaseClient, noteId: string, name = "photo.png") {
  const row = await client
    .from("attachments")
    .insert({ note_id: noteId, name, size: PNG.byteLength, content_type: "image/png" })
    .select("id")
    .single();
  if (row.error) throw row.error;
  const path = `${owner.id}/${noteId}/${row.data.id}`;
  const up = await client.storage.from(BUCKET).upload(path, PNG, { contentType: "image/png" });
  if (up.error) throw up.error;
  return { attachmentId: row.data.id as string, path };
}

/** What the service role sees: the object's bytes, or null. */
async function truth(path: string) {
  const { data } = await service.storage.from(BUCKET).download(path);
  return data ? new Uint8Array(await data.arrayBuffer()) : null;
}

function clean(response: { error: unknown }) {
  const status = (response.error as { status?: number; statusCode?: string } | null)?.status;
  expect(status ?? 200, JSON.stringify(response.error)).toBeLessThan(500);
}

async function attempt(actor: Actor, op: Op): Promise<boolean> {
  const c = clients[actor];
  const w = await world();
  const bucket = c.storage.from(BUCKET);
  switch (op) {
    case "upload": {
      // A second row of the owner's (made by the owner), then this actor uploads its object.
      const row = await owner.client
        .from("attachments")
        .insert({ note_id: w.noteId, name: "b.png", size: 3, content_type: "image/png" })
        .select("id")
        .single();
      const path = `${owner.id}/${w.noteId}/${row.data?.id}`;
      const r = await bucket.upload(path, PNG, { contentType: "image/png" });
      clean(r);
      return (await truth(path)) !== null;
    }
    case "replace": {
      const r = await bucket.upload(w.path, new Uint8Array([9, 9]), {
        contentType: "image/png",
        upsert: true,
      });
      clean(r);
      return (await truth(w.path))?.byteLength === 2;
    }
    case "download": {
      const r = await bucket.download(w.path);
      return r.data !== null && r.data.size === PNG.byteLength;
    }
    case "list": {
      const r = await bucket.list(`${owner.id}/${w.noteId}`);
      clean(r);
      return (r.data ?? []).some((o) => o.name === w.attachmentId);
    }
    case "signed url": {
      const r = await bucket.createSignedUrl(w.path, 60);
      clean(r);
      if (!r.data) return false;
      const served = await local.fetch(r.data.signedUrl);
      return served.status === 200;
    }
    case "remove": {
      const r = await bucket.remove([w.path]);
      clean(r);
      return (await truth(w.path)) === null;
    }
    case "row select": {
      const r = await c.from("attachments").select("id, name").eq("id", w.attachmentId);
      return (r.data ?? []).length === 1;
    }
    case "row insert": {
      const name = `x${crypto.randomUUID()}`;
      const r = await c
        .from("attachments")
        .insert({ note_id: w.noteId, name, size: 1, content_type: "text/plain" });
      expect(r.status).toBeLessThan(500);
      const rows = await service.from("attachments").select("id").eq("name", name);
      return (rows.data ?? []).length === 1;
    }
    case "row delete": {
      const r = await c.from("attachments").delete().eq("id", w.attachmentId);
      expect(r.status).toBeLessThan(500);
      const rows = await service.from("attachments").select("id").eq("id", w.attachmentId);
      return (rows.data ?? []).length === 0;
    }
  }
}

describe("the attachments bucket and table", () => {
  test.each(Object.keys(EXPECTED) as Actor[])("%s", async (actor) => {
    const succeeded: Op[] = [];
    for (const op of OPS) if (await attempt(actor, op)) succeeded.push(op);
    expect(succeeded).toEqual(EXPECTED[actor]);
  });
});

describe("the rules around the matrix", () => {
  test("a stranger cannot upload into their own folder for someone else's note, nor without a row", async () => {
    const w = await world();
    const strangerId = (await stranger.auth.getUser()).data.user?.id;
    const own = `${strangerId}/${w.noteId}/${crypto.randomUUID()}`;
    const r = await stranger.storage.from(BUCKET).upload(own, PNG, { contentType: "image/png" });
    expect(r.error).not.toBeNull();
    // The owner too needs a row: a key of their choosing (a file name) is refused.
    const byName = await owner.client.storage
      .from(BUCKET)
      .upload(`${owner.id}/${w.noteId}/photo.png`, PNG, { contentType: "image/png" });
    expect(byName.error).not.toBeNull();
    expect(await truth(`${owner.id}/${w.noteId}/photo.png`)).toBeNull();
  });

  test("after an unshare the recipient's next read is refused", async () => {
    const w = await world();
    expect((await recipient.client.storage.from(BUCKET).download(w.path)).data).not.toBeNull();
    const unshared = await owner.client
      .from("note_shares")
      .delete()
      .match({ note_id: w.noteId, shared_with_email: recipient.email });
    expect(unshared.error).toBeNull();
    const again = await recipient.client.storage.from(BUCKET).download(w.path);
    expect(again.data).toBeNull();
    const signed = await recipient.client.storage.from(BUCKET).createSignedUrl(w.path, 60);
    expect(signed.data).toBeNull();
    const rows = await recipient.client.from("attachments").select("id").eq("note_id", w.noteId);
    expect(rows.data).toEqual([]);
  });

  test("the bucket enforces its size limit and types", async () => {
    const note = await owner.client.from("notes").insert({ title: "limits" }).select("id").single();
    const row = await owner.client
      .from("attachments")
      .insert({ note_id: note.data?.id, name: "big.png", size: 1, content_type: "image/png" })
      .select("id")
      .single();
    const path = `${owner.id}/${note.data?.id}/${row.data?.id}`;
    const tooBig = await owner.client.storage
      .from(BUCKET)
      .upload(path, new Uint8Array(10 * 1024 * 1024 + 1), { contentType: "image/png" });
    expect(tooBig.error?.message).toMatch(/exceeded the maximum allowed size/);
    const html = await owner.client.storage
      .from(BUCKET)
      .upload(path, new TextEncoder().encode("<script>"), { contentType: "text/html" });
    expect(html.error?.message).toMatch(/mime type text\/html is not supported/);
    expect(await truth(path)).toBeNull();
  });

  test("a display name keeps any characters; the key never carries it", async () => {
    const note = await owner.client.from("notes").insert({ title: "names" }).select("id").single();
    const name = "../../etc/passwd 📎 <b>\u202e.png";
    const file = await addFile(owner.client, note.data?.id, name);
    const row = await owner.client
      .from("attachments")
      .select("name")
      .eq("id", file.attachmentId)
      .single();
    expect(row.data?.name).toBe(name);
    expect(file.path).toBe(`${owner.id}/${note.data?.id}/${file.attachmentId}`);
    // The id is the database's: a client cannot choose it.
    const chosen = await owner.client.from("attachments").insert({
      id: crypto.randomUUID(),
      note_id: note.data?.id,
      name: "x",
      size: 1,
      content_type: "text/plain",
    });
    expect(chosen.error?.code).toBe("42501");
  });
});
