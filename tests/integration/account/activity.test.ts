import { describe, expect, it } from "vitest";
import { adminClient, signedInClient } from "../../support/backend";
import { activityKinds } from "../support/account";
import { signedInBrowser } from "../support/auth-flows";
import { BrowserLess } from "../support/browser-less";

describe("security activity", () => {
  it("sign-in and sign-out through the app are recorded by the database, newest first, with the browser", async () => {
    const { browser, email, password } = await signedInBrowser();
    await browser.post("/sign-out", { scope: "local" });
    const again = new BrowserLess();
    await again.post(
      "/sign-in",
      { intent: "password", email, password },
      { headers: { "User-Agent": "Mozilla/5.0 (X11; Linux x86_64) Firefox/140.0" } },
    );
    const page = await again.get("/account/activity");
    expect(page.status).toBe(200);
    expect(activityKinds(page.body)).toEqual(["signed_in", "signed_out", "signed_in"]);
    // The method is the session's amr claim, as Auth wrote it; the browser is the one the session
    // stated (session_devices: the Worker's sign-in call carries no browser User-Agent).
    expect(page.body).toMatch(/data-kind="signed_in"[\s\S]*?Password/);
    expect(page.body).toContain("Firefox on Linux");
  });

  it("a change made straight through the Auth API is recorded too", async () => {
    const { client, email, password } = await signedInClient();
    expect((await client.auth.updateUser({ password: `${password}-2` })).error).toBeNull();
    const again = new BrowserLess();
    await again.post("/sign-in", { intent: "password", email, password: `${password}-2` });
    const page = await again.get("/account/activity");
    expect(activityKinds(page.body)).toEqual(["signed_in", "password_changed", "signed_in"]);
  });

  it("RLS: a user reads only their own events, and nobody can write, edit or delete them", async () => {
    const alice = await signedInClient();
    const bob = await signedInClient();
    const own = await alice.client.from("security_events").select("kind, aal");
    expect(own.data).toEqual([{ kind: "signed_in", aal: "aal1" }]);
    const others = await bob.client
      .from("security_events")
      .select("*")
      .eq("user_id", alice.user.id);
    expect(others.data).toEqual([]);

    const insert = await bob.client
      .from("security_events")
      .insert({ user_id: alice.user.id, kind: "signed_in" });
    expect(insert.error?.code).toBe("42501");
    const update = await alice.client
      .from("security_events")
      .update({ kind: "password_changed" })
      .eq("user_id", alice.user.id);
    expect(update.error?.code).toBe("42501");
    const remove = await alice.client.from("security_events").delete().eq("user_id", alice.user.id);
    expect(remove.error?.code).toBe("42501");
    const service = await adminClient()
      .from("security_events")
      .delete()
      .eq("user_id", alice.user.id);
    expect(service.error?.code).toBe("42501");

    const after = await alice.client.from("security_events").select("kind");
    expect(after.data).toEqual([{ kind: "signed_in" }]);
  });

  it("no session and no key can write an entry: record_security_event() is gone", async () => {
    const { client } = await signedInClient();
    const forged = await client.rpc("record_security_event", { event_kind: "password_changed" });
    expect(forged.status).toBe(404);
    expect(forged.error?.code).toBe("PGRST202");
    const service = await adminClient().rpc("record_security_event", { event_kind: "signed_in" });
    expect(service.error?.code).toBe("PGRST202");
    const rows = await client.from("security_events").select("kind");
    expect(rows.data).toEqual([{ kind: "signed_in" }]);
  });
});
