// The bench's signed-in visitors: one user with a page of notes, signed in with the real
// @supabase/ssr client (so the cookies are exactly what the app sets), as many sessions as needed.
import { createServerClient } from "@supabase/ssr";
import { createClient } from "@supabase/supabase-js";
import { PUBLISHABLE_KEY, SECRET_KEY } from "../tests/support/backend.ts";
import { CookieJar } from "./cookies.ts";

const PASSWORD = `bench-${crypto.randomUUID()}`;
export const NOTE_COUNT = 30;
/** A title every signed-in /notes page shows (the newest note is listed first). */
export const NEWEST_NOTE = `Bench note ${NOTE_COUNT}`;

export interface BenchUser {
  email: string;
  password: string;
  /** A new session of this user: its own refresh token, as the app's cookies. */
  signIn: () => Promise<CookieJar>;
}

/** A confirmed user with NOTE_COUNT notes (a few of them tagged) on the backend at `url`. */
export async function userWithNotes(url: string): Promise<BenchUser> {
  const email = `bench-${crypto.randomUUID()}@example.com`;
  const admin = createClient(url, SECRET_KEY, {
    auth: { persistSession: false, autoRefreshToken: false },
  });
  const created = await admin.auth.admin.createUser({
    email,
    password: PASSWORD,
    email_confirm: true,
  });
  if (created.error) throw created.error;

  const client = createClient(url, PUBLISHABLE_KEY, {
    auth: { persistSession: false, autoRefreshToken: false },
  });
  const signedIn = await client.auth.signInWithPassword({ email, password: PASSWORD });
  if (signedIn.error) throw signedIn.error;
  const notes = Array.from({ length: NOTE_COUNT }, (_, i) => ({
    title: `Bench note ${i + 1}`,
    body: `A note of a few sentences, as people write them. `.repeat(6),
  }));
  // One at a time, so that updated_at orders them as numbered.
  for (const note of notes) {
    const inserted = await client.from("notes").insert(note).select("id").single();
    if (inserted.error) throw inserted.error;
    if (notes.indexOf(note) % 5 === 0) {
      const tagged = await client.rpc("set_note_tags", {
        note_id: inserted.data.id,
        tag_names: ["work", `topic-${notes.indexOf(note) % 3}`],
      });
      if (tagged.error) throw tagged.error;
    }
  }
  await client.auth.signOut({ scope: "local" });
  return { email, password: PASSWORD, signIn: () => signInWithCookies(url, email) };
}

async function signInWithCookies(url: string, email: string): Promise<CookieJar> {
  const jar = new CookieJar();
  const client = createServerClient(url, PUBLISHABLE_KEY, {
    cookies: {
      getAll: () => jar.entries(),
      setAll: (cookies) => {
        for (const { name, value } of cookies) jar.set(name, value);
      },
    },
  });
  const signedIn = await client.auth.signInWithPassword({ email, password: PASSWORD });
  if (signedIn.error) throw signedIn.error;
  return jar;
}

/**
 * The same session, stored as if its access token had expired a minute ago: the app's middleware
 * must refresh it (one auth round trip) and send new cookies.
 */
export function withExpiredAccessToken(jar: CookieJar, storageKey: string): CookieJar {
  const session = jar.readSession(storageKey);
  if (!session) throw new Error("no session cookie to age");
  const aged = jar.clone();
  aged.writeSession(storageKey, { ...session, expires_at: Math.floor(Date.now() / 1000) - 60 });
  return aged;
}
