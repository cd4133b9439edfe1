import { createServerClient } from "@supabase/ssr";
import { createClient } from "@supabase/supabase-js";
import { BACKEND_URL, PUBLISHABLE_KEY, SECRET_KEY, STORAGE_KEY } from "./app.ts";
import type { BrowserLess } from "./browser-less.ts";

/**
 * A fresh user on the test backend, signed in with the real @supabase/ssr client so the cookies
 * are exactly what the app would have set. Returns them as a Cookie header.
 */
export async function signedInUser() {
  const email = `it-${crypto.randomUUID()}@example.com`;
  const password = `pw-${crypto.randomUUID()}`;
  const admin = createClient(BACKEND_URL, SECRET_KEY, {
    auth: { persistSession: false, autoRefreshToken: false },
  });
  const created = await admin.auth.admin.createUser({ email, password, email_confirm: true });
  if (created.error) throw created.error;

  const jar = new Map<string, string>();
  const client = createServerClient(BACKEND_URL, PUBLISHABLE_KEY, {
    cookies: {
      getAll: () => [...jar].map(([name, value]) => ({ name, value })),
      setAll: (cookies) => {
        for (const { name, value } of cookies) {
          if (value) jar.set(name, value);
          else jar.delete(name);
        }
      },
    },
  });
  const signedIn = await client.auth.signInWithPassword({ email, password });
  if (signedIn.error) throw signedIn.error;
  return { email, userId: created.data.user.id, jar, cookie: cookieHeader(jar) };
}

export function cookieHeader(jar: Map<string, string>): string {
  return [...jar].map(([name, value]) => `${name}=${value}`).join("; ");
}

/** Reads the session JSON out of @supabase/ssr's base64url cookie (single chunk). */
export function decodeSession(value: string): Record<string, unknown> {
  return JSON.parse(Buffer.from(value.replace(/^base64-/, ""), "base64url").toString("utf8"));
}

export function encodeSession(session: Record<string, unknown>): string {
  return `base64-${Buffer.from(JSON.stringify(session)).toString("base64url")}`;
}

/** Make the access token look expired so the next request must ask the auth server. */
export function expireAccessToken(browser: BrowserLess) {
  const value = browser.cookies.get(STORAGE_KEY);
  if (!value) throw new Error("expected a single-chunk session cookie");
  browser.cookies.set(STORAGE_KEY, encodeSession({ ...decodeSession(value), expires_at: 1 }));
}
