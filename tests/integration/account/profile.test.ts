// /account: username (public.profiles, unique) and display name (user metadata, mirrored into the
// profile by a trigger), saved together by one form.

import { describe, expect, it } from "vitest";
import { adminClient } from "../../support/backend.ts";
import { fieldError, signedInBrowser } from "../support/auth-flows";

const unique = () => `u_${crypto.randomUUID().replaceAll("-", "").slice(0, 10)}`;

async function profileOf(id: string) {
  const { data } = await adminClient()
    .from("profiles")
    .select("username, display_name")
    .eq("id", id)
    .single();
  return data;
}

describe("/account", () => {
  it("saves username (lower-cased) and display name; the metadata and the profile agree", async () => {
    const { browser, user } = await signedInBrowser();
    const page = await browser.get("/account");
    expect(page.status).toBe(200);
    expect(page.body).toContain('data-testid="profile-form"');
    const name = unique();
    const saved = await browser.post("/account?index", {
      username: `  ${name.toUpperCase()} `,
      displayName: "  Grace Hopper ",
    });
    expect(saved.status).toBe(200);
    expect(saved.body).toContain("Your profile was saved.");
    expect(await profileOf(user.id)).toEqual({ username: name, display_name: "Grace Hopper" });
    const { data } = await adminClient().auth.admin.getUserById(user.id);
    expect(data.user?.user_metadata.display_name).toBe("Grace Hopper");
    const again = await browser.get("/account");
    expect(again.body).toContain(`value="${name}"`);
    expect(again.body).toContain('value="Grace Hopper"');
  });

  it("a taken username is a 409 beside the field, and nothing is saved", async () => {
    const first = await signedInBrowser();
    const second = await signedInBrowser();
    const name = unique();
    await first.browser.post("/account?index", { username: name, displayName: "" });
    const taken = await second.browser.post("/account?index", {
      username: name.toUpperCase(),
      displayName: "Should not save",
    });
    expect(taken.status).toBe(409);
    expect(fieldError(taken.body, "username")).toBe("That username is taken. Try another one.");
    expect(taken.body).toContain('value="Should not save"');
    expect(await profileOf(second.user.id)).toEqual({ username: null, display_name: null });
  });

  it.each([
    ["ab", "username"],
    ["has space", "username"],
    ["x".repeat(31), "username"],
    ["emoji_😀", "username"],
  ])("username %j is refused with the rules beside the field", async (username, field) => {
    const { browser } = await signedInBrowser();
    const visit = await browser.post("/account?index", { username, displayName: "" });
    expect(visit.status).toBe(400);
    expect(fieldError(visit.body, field)).toContain("3–30 characters");
  });

  it("a display name over 100 characters is refused; clearing both fields is allowed", async () => {
    const { browser, user } = await signedInBrowser();
    const long = await browser.post("/account?index", {
      username: "",
      displayName: "d".repeat(101),
    });
    expect(long.status).toBe(400);
    expect(fieldError(long.body, "displayName")).toContain("at most 100");
    await browser.post("/account?index", { username: unique(), displayName: "Someone" });
    const cleared = await browser.post("/account?index", { username: "", displayName: "" });
    expect(cleared.status).toBe(200);
    expect(await profileOf(user.id)).toEqual({ username: null, display_name: null });
  });
});
