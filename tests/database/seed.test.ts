// supabase/seed.sql: the demo accounts and notes a fresh local database (and `supabase db reset`)
// starts with. The shared test backend runs without the seed (tests make their own users), so
// this file starts a backend of its own, in memory, with the project's config.toml [db.seed].
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { DEMO_LOGINS } from "../../scripts/demo-logins.ts";
import { type MemoryBackend, memoryBackend } from "../support/memory-backend.ts";

/** The demo logins `npm run dev` prints and the README lists. */
const [ADA, GRACE] = DEMO_LOGINS.map(({ email, password }) => ({ email, password })) as [
  { email: string; password: string },
  { email: string; password: string },
];

let local: MemoryBackend;
beforeAll(async () => {
  local = await memoryBackend({});
}, 60_000);
afterAll(() => local?.close());

async function signIn(who: { email: string; password: string }) {
  const client = local.client();
  const { data, error } = await client.auth.signInWithPassword(who);
  expect(error).toBeNull();
  return { client, user: data.user };
}

describe("seed.sql", () => {
  test("Ada and Grace sign in with their documented passwords, as confirmed email users", async () => {
    const ada = await signIn(ADA);
    expect(ada.user).toMatchObject({
      email: "ada@example.com",
      aud: "authenticated",
      role: "authenticated",
      app_metadata: { provider: "email", providers: ["email"] },
      user_metadata: { display_name: "Ada Lovelace" },
      identities: [{ provider: "email", identity_data: { email: "ada@example.com" } }],
    });
    expect(ada.user?.email_confirmed_at).toBeTruthy();
    const grace = await signIn(GRACE);
    expect(grace.user?.user_metadata.display_name).toBe("Grace Hopper");
    expect(DEMO_LOGINS.map((l) => l.name)).toEqual(["Ada Lovelace", "Grace Hopper"]);
    // and a wrong password is still refused
    const wrong = await local.client().auth.signInWithPassword({ ...ADA, password: "nope-nope" });
    expect(wrong.error).toMatchObject({ status: 400, code: "invalid_credentials" });
  });

  test("passwords are bcrypt hashes as GoTrue stores them (pgcrypto, cost 10)", async () => {
    const { rows } = await local.backend.db.query<{ hash: string }>(
      "select encrypted_password as hash from auth.users where email = $1",
      [ADA.email],
    );
    expect(rows[0]?.hash).toMatch(/^\$2a\$10\$[./A-Za-z0-9]{53}$/);
  });

  test("Ada's notes are hers, Markdown bodies, tagged, with her profile", async () => {
    const { client, user } = await signIn(ADA);
    const { data: notes } = await client
      .from("notes")
      .select("title, body, pinned, tags(name)")
      .order("created_at");
    expect(notes?.map((n) => n.title)).toEqual([
      "Welcome to Edge Notes",
      "Shopping list",
      "Notes on the Analytical Engine",
      "Reading list",
    ]);
    const shopping = notes?.find((n) => n.title === "Shopping list");
    expect(shopping?.body).toContain("- **bread**");
    expect(notes?.find((n) => n.title === "Reading list")?.tags).toEqual(
      expect.arrayContaining([{ name: "research" }, { name: "books" }]),
    );
    const { data: profile } = await client
      .from("profiles")
      .select("username, display_name")
      .eq("id", user?.id as string)
      .single();
    expect(profile).toEqual({ username: "ada", display_name: "Ada Lovelace" });
  });

  test("Grace reads the one note Ada shared with her, and none of the others", async () => {
    const { client } = await signIn(GRACE);
    const { data: notes } = await client.from("notes").select("title, owner_id");
    expect(notes?.map((n) => n.title)).toEqual(["Notes on the Analytical Engine"]);
    const { data: shares } = await client
      .from("note_shares")
      .select("shared_with_email, notes(title)");
    expect(shares).toEqual([
      {
        shared_with_email: "grace@example.com",
        notes: { title: "Notes on the Analytical Engine" },
      },
    ]);
    // read-only: her update changes nothing
    await client
      .from("notes")
      .update({ title: "Grace was here" })
      .eq("owner_id", notes?.[0]?.owner_id);
    const { data: after } = await client.from("notes").select("title");
    expect(after?.map((n) => n.title)).toEqual(["Notes on the Analytical Engine"]);
  });
});
