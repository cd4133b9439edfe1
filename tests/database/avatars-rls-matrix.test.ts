// Avatars (supabase/migrations/20261128002000_avatars.sql) as a matrix, through the real
// supabase-js and storage-js with real session tokens: for the public `avatars` bucket ×
// {anon, owner, the owner's aal1 session, a session of the owner's that was ended, another user
// (one the owner shares a note with), a stranger, an anonymous user}, exactly which operations
// succeed on the owner's pictures. "Succeeded" is judged by the service role afterwards (the
// object is there, or gone, or changed), so a 200 with nothing done counts as refused, and no
// cell may answer 5xx. The owner has a verified TOTP factor: "owner" is their aal2 session,
// "aal1" the same user signed in with the password only, "ended" another aal2 session of theirs
// that signed out (decision 023). Everyone may read a picture: that is what public means.
import type { SupabaseClient } from "@supabase/supabase-js";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { PASSWORD } from "../support/backend.ts";
import { signedOutSession } from "../support/ended-session.ts";
import { type MemoryBackend, memoryBackend } from "../support/memory-backend.ts";
import { aalOf, enrollVerifiedTotp } from "../support/mfa.ts";

type Actor = "anon" | "owner" | "aal1" | "ended" | "other" | "stranger" | "anonymous";
type Op =
  | "public url"
  | "download"
  | "list"
  | "upload"
  | "upload into own folder"
  | "replace"
  | "remove";

const BUCKET = "avatars";
const OPS: Op[] = [
  "public url",
  "download",
  "list",
  "upload",
  "upload into own folder",
  "replace",
  "remove",
];

/**
 * The whole policy: anyone reads a picture (a public bucket serves its objects without RLS, on the
 * public URL and, as upstream, on the authenticated download route too); only the owner lists or
 * touches their folder, and everyone may write only into their own.
 */
const READS: Op[] = ["public url", "download"];
const EXPECTED: Record<Actor, Op[]> = {
  anon: READS,
  owner: OPS,
  aal1: READS,
  ended: READS,
  other: [...READS, "upload into own folder"],
  stranger: [...READS, "upload into own folder"],
  anonymous: READS,
};

let local: MemoryBackend;
let owner: { id: string; client: SupabaseClient };
let service: SupabaseClient;
let clients: Record<Actor, SupabaseClient>;
let ids: Partial<Record<Actor, string>>;

beforeAll(async () => {
  local = await memoryBackend({ auth: { enableAnonymousSignIns: true } });
  const [o, other, s] = await Promise.all([local.signedIn(), local.signedIn(), local.signedIn()]);
  owner = { id: o.user.id, client: o.client };
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
  // "other" knows the owner: a note of the owner's is shared with them.
  const note = await owner.client.from("notes").insert({ title: "Hi" }).select("id").single();
  const shared = await owner.client.rpc("share_note", {
    note_id: note.data?.id,
    email: other.email,
  });
  expect(shared.data).toBe("shared");
  clients = {
    anon: local.client(),
    owner: owner.client,
    aal1,
    ended,
    other: other.client,
    stranger: s.client,
    anonymous,
  };
  ids = {
    other: other.user.id,
    stranger: s.user.id,
    anonymous: anonSignIn.data.user?.id,
  };
}, 60_000);

afterAll(() => local?.close());

const WEBP = new Uint8Array([0x52, 0x49, 0x46, 0x46, 4, 0, 0, 0, 0x57, 0x45, 0x42, 0x50]);

const version = () => `${Date.now().toString(36)}-${crypto.randomUUID().slice(0, 8)}.webp`;

/** Empties a folder as the service role (the bucket holds at most three pictures a user). */
async function emptyFolder(userId: string) {
  const bucket = service.storage.from(BUCKET);
  const { data } = await bucket.list(userId, { limit: 100 });
  const paths = (data ?? []).map((o) => `${userId}/${o.name}`);
  if (paths.length > 0) await bucket.remove(paths);
}

/** One picture of the owner's, uploaded as the owner, alone in their folder. */
async function picture() {
  await emptyFolder(owner.id);
  const path = `${owner.id}/${version()}`;
  const up = await owner.client.storage.from(BUCKET).upload(path, WEBP, {
    contentType: "image/webp",
  });
  if (up.error) throw up.error;
  return path;
}

/** What the service role sees: the object's bytes, or null. */
async function truth(path: string) {
  const { data } = await service.storage.from(BUCKET).download(path);
  return data ? new Uint8Array(await data.arrayBuffer()) : null;
}

function clean(response: { error: unknown }) {
  const status = (response.error as { status?: number } | null)?.status;
  expect(status ?? 200, JSON.stringify(response.error)).toBeLessThan(500);
}

async function attempt(actor: Actor, op: Op): Promise<boolean> {
  const bucket = clients[actor].storage.from(BUCKET);
  const path = await picture();
  switch (op) {
    case "public url": {
      // storage-js makes the URL; this actor's fetch carries its own headers (none for anon).
      const url = bucket.getPublicUrl(path).data.publicUrl;
      const token = (await clients[actor].auth.getSession()).data.session?.access_token;
      const served = await local.fetch(url, {
        headers: token ? { Authorization: `Bearer ${token}` } : {},
      });
      const body = new Uint8Array(await served.arrayBuffer());
      return served.status === 200 && body.byteLength === WEBP.byteLength;
    }
    case "download": {
      const r = await bucket.download(path);
      return r.data !== null && r.data.size === WEBP.byteLength;
    }
    case "list": {
      const r = await bucket.list(owner.id);
      clean(r);
      return (r.data ?? []).some((o) => `${owner.id}/${o.name}` === path);
    }
    case "upload": {
      const into = `${owner.id}/${version()}`;
      clean(await bucket.upload(into, WEBP, { contentType: "image/webp" }));
      return (await truth(into)) !== null;
    }
    case "upload into own folder": {
      // (aal1 and ended are the owner's own sessions: their folder is the owner's)
      const id = ["owner", "aal1", "ended"].includes(actor) ? owner.id : ids[actor];
      if (!id) return false;
      const into = `${id}/${version()}`;
      clean(await bucket.upload(into, WEBP, { contentType: "image/webp" }));
      return (await truth(into)) !== null;
    }
    case "replace": {
      const r = await bucket.upload(path, new Uint8Array([9, 9]), {
        contentType: "image/webp",
        upsert: true,
      });
      clean(r);
      return (await truth(path))?.byteLength === 2;
    }
    case "remove": {
      clean(await bucket.remove([path]));
      return (await truth(path)) === null;
    }
  }
}

describe("the avatars bucket", () => {
  test.each(Object.keys(EXPECTED) as Actor[])("%s", async (actor) => {
    const succeeded: Op[] = [];
    for (const op of OPS) if (await attempt(actor, op)) succeeded.push(op);
    expect(succeeded).toEqual(EXPECTED[actor]);
  });
});

describe("the rules around the matrix", () => {
  test("the owner's pictures are named as the app names versions, directly in their folder", async () => {
    await emptyFolder(owner.id);
    const bucket = owner.client.storage.from(BUCKET);
    for (const path of [
      `${owner.id}/nested/${version()}`,
      `${owner.id}/Photo.webp`,
      `${owner.id}/photo.gif`,
      `${owner.id}/photo`,
    ]) {
      const r = await bucket.upload(path, WEBP, { contentType: "image/webp" });
      expect(r.error, path).not.toBeNull();
      expect(await truth(path), path).toBeNull();
    }
  });

  test("a user holds at most three pictures", async () => {
    await emptyFolder(owner.id);
    const bucket = owner.client.storage.from(BUCKET);
    const paths = [1, 2, 3, 4].map(() => `${owner.id}/${version()}`);
    const results = [];
    for (const path of paths) {
      results.push((await bucket.upload(path, WEBP, { contentType: "image/webp" })).error === null);
    }
    expect(results).toEqual([true, true, true, false]);
    // One removed: room for the next.
    await bucket.remove([paths[0] ?? ""]);
    expect(
      (await bucket.upload(paths[3] ?? "", WEBP, { contentType: "image/webp" })).error,
    ).toBeNull();
    await emptyFolder(owner.id);
  });

  test("the bucket enforces its size limit and types", async () => {
    await emptyFolder(owner.id);
    const bucket = owner.client.storage.from(BUCKET);
    const big = `${owner.id}/${version()}`;
    const tooBig = await bucket.upload(big, new Uint8Array(2 * 1024 * 1024 + 1), {
      contentType: "image/webp",
    });
    expect(tooBig.error?.message).toMatch(/exceeded the maximum allowed size/);
    const svg = `${owner.id}/${version()}`;
    const script = await bucket.upload(svg, new TextEncoder().encode("<svg onload=x>"), {
      contentType: "image/svg+xml",
    });
    expect(script.error?.message).toMatch(/mime type image\/svg\+xml is not supported/);
    expect([await truth(big), await truth(svg)]).toEqual([null, null]);
  });

  test("the profile names only a picture of the user's own, written through the data API", async () => {
    const { client, user } = await local.signedIn();
    const read = async () =>
      (await client.from("profiles").select("avatar_path").eq("id", user.id).single()).data
        ?.avatar_path;
    const set = (avatar_path: string | null) =>
      client.from("profiles").update({ avatar_path }).eq("id", user.id);
    const own = `${user.id}/${version()}`;
    expect((await set(own)).error).toBeNull();
    expect(await read()).toBe(own);
    // Someone else's picture, a nested path, a name of another shape: refused.
    for (const path of [
      `${owner.id}/${version()}`,
      `${user.id}/a/${version()}`,
      `${user.id}/x.svg`,
    ]) {
      expect((await set(path)).error?.code, path).toBe("23514");
      expect(await read(), path).toBe(own);
    }
    // The user's metadata names nothing others see (any session may write it).
    expect((await client.auth.updateUser({ data: { avatar_path: null } })).error).toBeNull();
    expect(await read()).toBe(own);
    expect((await set(null)).error).toBeNull();
    expect(await read()).toBeNull();
  });
});
