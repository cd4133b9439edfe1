import { adminClient, anonClient } from "../../support/backend.ts";

/** The kinds on the /account/activity page, newest first. */
export function activityKinds(body: string): string[] {
  return [...body.matchAll(/data-kind="([a-z_]+)"/g)].map((m) => m[1] ?? "");
}

/** The user as the auth server has it now (its email, pending change…). */
export async function emailOf(userId: string) {
  const { data, error } = await adminClient().auth.admin.getUserById(userId);
  if (error) throw error;
  return data.user;
}

/** Does this password sign this address in (straight at the backend, not through the app)? */
export async function canSignIn(email: string, password: string) {
  const { error } = await anonClient().auth.signInWithPassword({ email, password });
  return !error;
}
