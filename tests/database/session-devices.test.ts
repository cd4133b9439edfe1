// public.session_devices (supabase/migrations/20261127000900_session_devices.sql): the device a
// session signed in from, stated once by that session itself. Through the real clients: no one
// states another session's device (not even another of their own), a stated device is never
// changed, and the row goes with its session.
import { describe, expect, test } from "vitest";
import { adminClient, anonClient, signedInClient } from "../support/backend.ts";

const CHROME = "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) Chrome/131.0.0.0 Safari/537.36";

function sessionIdOf(token: string): string {
  const claims = JSON.parse(Buffer.from(token.split(".")[1] ?? "", "base64url").toString());
  return claims.session_id as string;
}

describe("session_devices", () => {
  test("a session states its own device, once; it reads its user's rows only", async () => {
    const alice = await signedInClient();
    const own = sessionIdOf(alice.session.access_token);
    const first = await alice.client
      .from("session_devices")
      .insert({ session_id: own, user_agent: CHROME });
    expect(first.error).toBeNull();
    const again = await alice.client
      .from("session_devices")
      .insert({ session_id: own, user_agent: "forged" });
    expect(again.error?.code).toBe("23505");
    const renamed = await alice.client
      .from("session_devices")
      .update({ user_agent: "forged" })
      .eq("session_id", own);
    expect(renamed.error?.code).toBe("42501");
    const { data } = await alice.client.from("session_devices").select("session_id, user_agent");
    expect(data).toEqual([{ session_id: own, user_agent: CHROME }]);
    const bob = await signedInClient();
    expect((await bob.client.from("session_devices").select("session_id")).data).toEqual([]);
  });

  test("no session states another's device: another user's, or another of the same user's", async () => {
    const alice = await signedInClient();
    const bob = await signedInClient();
    const bobsSession = sessionIdOf(bob.session.access_token);
    const planted = await alice.client
      .from("session_devices")
      .insert({ session_id: bobsSession, user_agent: "forged" });
    expect(planted.error?.code).toBe("42501");

    // A second session of alice's, and her first trying to name it.
    const second = anonClient();
    const signedIn = await second.auth.signInWithPassword({
      email: alice.email,
      password: alice.password,
    });
    const secondSession = sessionIdOf(signedIn.data.session?.access_token ?? "");
    const sibling = await alice.client
      .from("session_devices")
      .insert({ session_id: secondSession, user_agent: "forged" });
    expect(sibling.error?.code).toBe("42501");
    // Nor can the user be set by the caller.
    const asBob = await bob.client
      .from("session_devices")
      .insert({ session_id: bobsSession, user_agent: CHROME, user_id: alice.user.id });
    expect(asBob.error?.code).toBe("42501");
    const { data } = await adminClient()
      .from("session_devices")
      .select("session_id")
      .in("session_id", [bobsSession, secondSession]);
    expect(data).toEqual([]);
  });

  test("anonymous callers and ended sessions state nothing; the row goes with its session", async () => {
    const anon = await anonClient()
      .from("session_devices")
      .insert({ session_id: crypto.randomUUID(), user_agent: CHROME });
    expect(anon.error).not.toBeNull();

    const alice = await signedInClient();
    const own = sessionIdOf(alice.session.access_token);
    expect(
      (await alice.client.from("session_devices").insert({ session_id: own, user_agent: CHROME }))
        .error,
    ).toBeNull();
    await alice.client.auth.signOut({ scope: "local" });
    const { data } = await adminClient()
      .from("session_devices")
      .select("session_id")
      .eq("session_id", own);
    expect(data).toEqual([]);
  });
});
