// Anonymous sign-ins. config.toml switches them off (the app never uses them), so the shared test
// backend answers as a hosted project with them off. A second backend in this worker has them on,
// as a hosted project could: there the Auth API still supports them, and the database refuses
// anonymous sessions everything in the app's data (restrictive policies on every table, and the
// functions' private.require_permanent_user() guard), whatever the Auth settings.
import type { SupabaseClient } from "@supabase/supabase-js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { anonClient, authFetch, randomEmail } from "../../../../tests/support/backend.ts";
import { type MemoryBackend, memoryBackend } from "../../../../tests/support/memory-backend.ts";
import { followOAuth, type ProviderAccountInput } from "../../../../tests/support/oauth.ts";

const ANONYMOUS_REFUSAL = {
  code: "42501",
  message: "Anonymous users cannot do this: sign up with an email address first",
};

let local: MemoryBackend;
/** The same with [auth.email] enable_confirmations off, as the Supabase CLI's default config. */
let withoutConfirmations: MemoryBackend;

beforeAll(async () => {
  local = await memoryBackend({ auth: { enableAnonymousSignIns: true } });
  withoutConfirmations = await memoryBackend({
    auth: { enableAnonymousSignIns: true, email: { enableConfirmations: false } },
  });
}, 60_000);
afterAll(async () => {
  await local?.close();
  await withoutConfirmations?.close();
});

/** A fresh anonymous user signed in on its own client of the variant backend. */
async function anonymous(options: { flowType?: "implicit" | "pkce" } = {}) {
  const client = local.client(options);
  const { data, error } = await client.auth.signInAnonymously();
  if (error) throw error;
  return { client, id: data.user?.id as string };
}

/** Links Google to `client`'s user through the local provider page of `backend`, as a browser
 * would: where the callback lands (redirect_to with a code, or with the error). */
async function linkGoogle(
  backend: MemoryBackend,
  client: SupabaseClient,
  account: ProviderAccountInput,
): Promise<URL> {
  const linked = await client.auth.linkIdentity({
    provider: "google",
    options: { redirectTo: "http://localhost:5173/auth/callback", skipBrowserRedirect: true },
  });
  if (linked.error) throw linked.error;
  return followOAuth(backend.fetch as never, linked.data.url, account);
}

describe("enable_anonymous_sign_ins = false (config.toml)", () => {
  it("refuses anonymous sign-ins as the hosted service does, through supabase-js and raw", async () => {
    const refused = await anonClient().auth.signInAnonymously();
    expect(refused.error).toMatchObject({
      status: 422,
      code: "anonymous_provider_disabled",
      message: "Anonymous sign-ins are disabled",
    });
    expect(refused.data.session).toBeNull();
    const raw = await authFetch("/signup", { method: "POST", body: "{}" });
    expect(raw.status).toBe(422);
    expect(raw.headers.get("x-sb-error-code")).toBe("anonymous_provider_disabled");
    const settings = await (await authFetch("/settings")).json();
    expect(settings.external).toMatchObject({ email: true, anonymous_users: false });
  });
});

describe("enable_anonymous_sign_ins = true (a variant backend): the Auth API", () => {
  it("creates an anonymous user with a session", async () => {
    const client = local.client();
    const { data, error } = await client.auth.signInAnonymously({
      options: { data: { theme: "dark" } },
    });
    expect(error).toBeNull();
    expect(data.user).toMatchObject({
      is_anonymous: true,
      email: "",
      app_metadata: {},
      user_metadata: { theme: "dark" },
    });
    expect(data.user?.identities).toEqual([]);
    const { data: claims } = await client.auth.getClaims();
    expect(claims?.claims).toMatchObject({
      is_anonymous: true,
      role: "authenticated",
      amr: [{ method: "anonymous" }],
    });
  });

  it("lets an anonymous user add an email (confirmed via the new address)", async () => {
    const { client, id } = await anonymous();
    const email = randomEmail("anon");
    const { error } = await client.auth.updateUser({ email });
    expect(error).toBeNull();
    const mail = local.backend.inbox.list(email).find((m) => m.type === "email_change");
    const verified = await client.auth.verifyOtp({
      email,
      token: mail?.token ?? "",
      type: "email_change",
    });
    expect(verified.error).toBeNull();
    expect(verified.data.user).toMatchObject({ id, email, is_anonymous: false });
    expect(verified.data.user?.identities?.map((i) => i.provider)).toEqual(["email"]);
  });

  it("an anonymous user who links a provider becomes a permanent user with its email", async () => {
    const { client } = await anonymous({ flowType: "pkce" });
    const email = randomEmail("anon");
    const landed = await linkGoogle(local, client, { name: "Anon", email });
    const { data, error } = await client.auth.exchangeCodeForSession(
      landed.searchParams.get("code") ?? "",
    );
    expect(error).toBeNull();
    expect(data.user).toMatchObject({ is_anonymous: false, email });
    expect(data.user?.app_metadata.providers).toEqual(["google"]);
  });

  it("linking a provider whose email it has not verified: the address waits for its confirmation email, with confirmations on or off", async () => {
    // Auth's linkIdentityToUser sends the confirmation for an unverified provider email whatever
    // enable_confirmations says (mailer autoconfirm covers sign-ups, not a provider's claim).
    for (const backend of [local, withoutConfirmations]) {
      const client = backend.client({ flowType: "pkce" });
      const signedIn = await client.auth.signInAnonymously();
      if (signedIn.error) throw signedIn.error;
      const email = randomEmail("unverified");
      const landed = await linkGoogle(backend, client, { email, email_verified: false });
      expect(landed.searchParams.get("code")).toBeNull();
      expect(landed.searchParams.get("error_code")).toBe("email_not_confirmed");
      expect(landed.searchParams.get("error_description")).toBe(
        "Unverified email with google. A confirmation email has been sent to your google email",
      );
      const user = (await backend.admin().auth.admin.getUserById(signedIn.data.user?.id ?? "")).data
        .user;
      expect(user).toMatchObject({ email, is_anonymous: true });
      expect(user?.email_confirmed_at).toBeFalsy();
      expect(backend.backend.inbox.list(email).map((m) => m.type)).toEqual(["confirmation"]);
    }
  });

  it("anonymous users cannot enroll a second factor", async () => {
    const { client } = await anonymous();
    const refused = await client.auth.mfa.enroll({ factorType: "totp" });
    expect(refused.error).toMatchObject({
      status: 403,
      code: "no_authorization",
      message: "Anonymous user not allowed to perform these actions",
    });
  });
});

describe("enable_anonymous_sign_ins = true: the database refuses anonymous sessions", () => {
  let owner: Awaited<ReturnType<MemoryBackend["signedIn"]>>;
  let recipient: Awaited<ReturnType<MemoryBackend["signedIn"]>>;
  let sharedNoteId: string;

  beforeAll(async () => {
    [owner, recipient] = await Promise.all([local.signedIn(), local.signedIn()]);
    const note = await owner.client
      .from("notes")
      .insert({ title: "Shared between two accounts" })
      .select("id")
      .single();
    if (note.error) throw note.error;
    sharedNoteId = note.data.id;
    const shared = await owner.client.rpc("share_note", {
      note_id: sharedNoteId,
      email: recipient.email,
    });
    expect(shared.data).toBe("shared");
  });

  /** A note owned by an anonymous user (only the service role can still make one). */
  async function anonymousNote(id: string) {
    const { data, error } = await local
      .admin()
      .from("notes")
      .insert({ owner_id: id, title: "Unsolicited" })
      .select("id")
      .single();
    if (error) throw error;
    return data.id as string;
  }

  async function sharesOf(noteId: string) {
    const { data } = await local.admin().from("note_shares").select("*").eq("note_id", noteId);
    return data ?? [];
  }

  async function missesOf(userId: string): Promise<number> {
    const r = await local.backend.db.query<{ n: number }>(
      "select count(*)::int as n from private.share_lookup_misses where user_id = $1",
      [userId],
    );
    return r.rows[0]?.n ?? -1;
  }

  it("cannot share a note into anyone's list: 403 42501, no share, the recipient sees nothing", async () => {
    const attacker = await anonymous();
    const noteId = await anonymousNote(attacker.id);
    const share = await attacker.client.rpc("share_note", {
      note_id: noteId,
      email: recipient.email,
    });
    expect(share.status).toBe(403);
    expect(share.error).toMatchObject(ANONYMOUS_REFUSAL);
    expect(share.data).toBeNull();
    expect(await sharesOf(noteId)).toEqual([]);
    const seen = await recipient.client.from("notes").select("id").eq("id", noteId);
    expect(seen.data).toEqual([]);
  });

  it("gets no email lookups at all, however many times it signs in again", async () => {
    for (let round = 0; round < 3; round++) {
      const attacker = await anonymous();
      const noteId = await anonymousNote(attacker.id);
      for (let i = 0; i < 3; i++) {
        const probe = await attacker.client.rpc("share_note", {
          note_id: noteId,
          email: i === 0 ? recipient.email : randomEmail("probe"),
        });
        // The same answer for an address with an account and one without: nothing learnt.
        expect(probe.error).toMatchObject(ANONYMOUS_REFUSAL);
      }
      expect(await missesOf(attacker.id)).toBe(0);
      expect(await sharesOf(noteId)).toEqual([]);
    }
  });

  it("reads, writes and deletes none of the app's tables; cannot record security events", async () => {
    const attacker = await anonymous();
    const client: SupabaseClient = attacker.client;
    const ownNote = await anonymousNote(attacker.id);
    // Its own profile exists (Auth's trigger) and its own note too, but the session reaches neither.
    const profile = await local.admin().from("profiles").select("id").eq("id", attacker.id);
    expect(profile.data).toHaveLength(1);
    for (const [table, columns] of [
      ["profiles", "id"],
      ["notes", "id, owner_id"],
      ["tags", "id"],
      ["note_tags", "note_id"],
      ["note_shares", "note_id, shared_with_email"],
      ["security_events", "id"],
    ] as const) {
      const read = await client.from(table).select(columns);
      expect([table, read.error, read.data]).toEqual([table, null, []]);
    }
    const insert = await client.from("notes").insert({ title: "guest note" });
    expect(insert.status).toBe(403);
    expect(insert.error?.code).toBe("42501");
    const update = await client.from("notes").update({ title: "changed" }).eq("id", ownNote);
    const remove = await client.from("notes").delete().eq("id", ownNote);
    expect([update.error, remove.error]).toEqual([null, null]);
    const note = await local.admin().from("notes").select("title").eq("id", ownNote).single();
    expect(note.data).toEqual({ title: "Unsolicited" });
    // A share it is not part of: not removable either.
    await client.from("note_shares").delete().eq("note_id", sharedNoteId);
    expect(await sharesOf(sharedNoteId)).toHaveLength(1);

    // The activity log has no function to call (the database writes it from Auth's tables).
    const event = await client.rpc("record_security_event", { event_kind: "password_changed" });
    expect(event.status).toBe(404);
    expect(event.error?.code).toBe("PGRST202");
    const tags = await client.rpc("set_note_tags", { note_id: ownNote, tag_names: ["x"] });
    expect(tags.error).toMatchObject(ANONYMOUS_REFUSAL);
    const listed = await client.rpc("list_note_shares", { note_id: ownNote });
    expect(listed.error).toMatchObject(ANONYMOUS_REFUSAL);
    const events = await local
      .admin()
      .from("security_events")
      .select("kind")
      .eq("user_id", attacker.id);
    expect(events.data).toEqual([{ kind: "signed_in" }]);
  });

  it("once it adds an email it is an ordinary account again", async () => {
    const { client } = await anonymous();
    const email = randomEmail("converted");
    await client.auth.updateUser({ email });
    const mail = local.backend.inbox.list(email).find((m) => m.type === "email_change");
    const verified = await client.auth.verifyOtp({
      email,
      token: mail?.token ?? "",
      type: "email_change",
    });
    expect(verified.error).toBeNull();
    const note = await client.from("notes").insert({ title: "Mine now" }).select("id").single();
    expect(note.error).toBeNull();
    const share = await client.rpc("share_note", {
      note_id: note.data?.id,
      email: recipient.email,
    });
    expect(share.data).toBe("shared");
  });
});
