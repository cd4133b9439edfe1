// What the Storage tests share: a signed-in user's client (fresh per test), the anon and service
// clients of the shared test backend, and raw calls for what storage-js hides (status codes,
// headers). The buckets and policies are test/fixtures/storage.sql's.
import type { SupabaseClient } from "@supabase/supabase-js";
import {
  adminClient,
  anonClient,
  BACKEND_URL,
  PUBLISHABLE_KEY,
  signedInClient,
} from "../../../../tests/support/backend.ts";

export { adminClient, anonClient, BACKEND_URL, PUBLISHABLE_KEY };

export const STORAGE_URL = `${BACKEND_URL}/storage/v1`;

export interface Member {
  client: SupabaseClient;
  id: string;
  token: string;
}

/** A fresh signed-in user: their client, id and access token. */
export async function member(): Promise<Member> {
  const { client, user, session } = await signedInClient();
  return { client, id: user.id, token: session.access_token };
}

/** A raw request to /storage/v1 as `token` (the publishable key as the apikey). */
export function storageFetch(
  path: string,
  init: RequestInit & { token?: string } = {},
): Promise<Response> {
  const headers = new Headers(init.headers);
  if (!headers.has("apikey")) headers.set("apikey", PUBLISHABLE_KEY);
  if (init.token) headers.set("authorization", `Bearer ${init.token}`);
  return fetch(`${STORAGE_URL}${path}`, { ...init, headers });
}
