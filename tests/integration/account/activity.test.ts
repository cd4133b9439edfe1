import { describe, expect, it } from "vitest";
import { adminClient, signedInClient } from "../../support/backend";
import { activityKinds } from "../support/account";
import { signedInBrowser } from "../support/auth-flows";
import { BrowserLess } from "../support/browser-less";

describe("security activity", () => {
  it("sign-in and sign-out through the app are recorded, newest first, with the browser", async () => {
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
    expect(page.body).toMatch(/data-kind="signed_in"[\s\S]*?Password/);
    expect(page.body).toContain("Firefox on Linux");
  });

  it("RLS: a user reads only their own events, and nobody can write, edit or delete them", async () => {
    const alice = await signedInClient();
    const bob = await signedInClient();
    const recorded = await alice.client.rpc("record_security_event", {
      event_kind: "password_changed",
      event_detail: { via: "test" },
    });
    expect(recorded.error).toBeNull();

    const own = await alice.client.from("security_events").select("kind, detail, aal");
    expect(own.data).toEqual([{ kind: "password_changed", detail: { via: "test" }, aal: "aal1" }]);
    const others = await bob.client.from("security_events").select("*");
    expect(others.data).toEqual([]);

    const insert = await bob.client
      .from("security_events")
      .insert({ user_id: alice.user.id, kind: "signed_in" });
    expect(insert.error?.code).toBe("42501");
    const update = await alice.client
      .from("security_events")
      .update({ kind: "signed_in" })
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
    expect(after.data).toEqual([{ kind: "password_changed" }]);
  });

  it("the RPC refuses unknown kinds, bad details and anonymous callers", async () => {
    const { client } = await signedInClient();
    const unknown = await client.rpc("record_security_event", { event_kind: "became_admin" });
    expect(unknown.error?.code).toBe("22023");
    const notObject = await client.rpc("record_security_event", {
      event_kind: "signed_in",
      event_detail: [1, 2],
    });
    expect(notObject.error?.code).toBe("22023");
    const huge = await client.rpc("record_security_event", {
      event_kind: "signed_in",
      event_detail: { pad: "x".repeat(5000) },
    });
    expect(huge.error?.code).toBe("22023");
    const anon = await adminClient()
      .schema("public")
      .rpc("record_security_event", { event_kind: "signed_in" });
    // service_role has no execute grant either: only signed-in users write their own events.
    expect(anon.error).not.toBeNull();
    const rows = await client.from("security_events").select("id");
    expect(rows.data).toEqual([]);
  });
});
