// /account: username (unique) and display name, saved together by one form into public.profiles
// through the data API (aal2 once the user has a factor), the display name also into the user's
// metadata for the header. What share partners see never comes from the metadata: a password-only
// session of a user with a factor may rewrite that through Auth, and nobody else sees it.

import sharp from "sharp";
import { describe, expect, it } from "vitest";
import { adminClient, anonClient } from "../../support/backend.ts";
import { fieldError, signedInBrowser } from "../support/auth-flows";
import { createNote } from "../support/notes";
import { enrollTotp } from "../support/totp";

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

  it("with a second factor: the aal2 form reaches a share partner; metadata written at aal1 does not", async () => {
    const owner = await signedInBrowser();
    const partner = await signedInBrowser();
    await enrollTotp(owner.browser);
    const id = await createNote(owner.browser, { title: "Plans" });
    expect(
      (await owner.browser.post(`/notes/${id}`, { intent: "share", email: partner.email })).status,
    ).toBe(200);
    const saved = await owner.browser.post("/account?index", {
      username: "",
      displayName: "Ada at aal2",
    });
    expect(saved.status).toBe(200);
    const png = await sharp({ create: { width: 8, height: 8, channels: 3, background: "#123456" } })
      .png()
      .toBuffer();
    const form = new FormData();
    form.set("intent", "upload");
    form.set("avatar", new File([new Uint8Array(png)], "me.png", { type: "image/png" }));
    const uploaded = await owner.browser.postMultipart("/account/avatar", form);
    expect(uploaded.body).toContain("Your picture was saved.");
    const { data: profile } = await adminClient()
      .from("profiles")
      .select("avatar_path")
      .eq("id", owner.user.id)
      .single();
    const picture = profile?.avatar_path ?? "";
    expect(picture).toMatch(new RegExp(`^${owner.user.id}/[0-9a-z-]+\\.png$`));
    /** The owner as the partner sees them on the shared note: name and picture. */
    const seen = async () => {
      const body = (await partner.browser.get(`/notes/${id}`)).body;
      const line = /data-testid="note-owner"[\s\S]*?<\/span><\/span>/.exec(body)?.[0] ?? body;
      return { name: /Shared by ([^<·]+?) ·/.exec(line)?.[1], picture: line.includes(picture) };
    };
    expect(await seen()).toEqual({ name: "Ada at aal2", picture: true });

    // The password alone: Auth takes the metadata (hosted Supabase does too), the app refuses.
    const aal1 = anonClient();
    const signIn = await aal1.auth.signInWithPassword({
      email: owner.email,
      password: owner.password,
    });
    expect(signIn.error).toBeNull();
    const changed = await aal1.auth.updateUser({
      data: { display_name: "Changed at aal1", avatar_path: null },
    });
    expect(changed.error).toBeNull();
    expect(await seen()).toEqual({ name: "Ada at aal2", picture: true });
    expect(await profileOf(owner.user.id)).toEqual({ username: null, display_name: "Ada at aal2" });

    // The owner, at aal2 again, renames: the partner sees it.
    const renamed = await owner.browser.post("/account?index", {
      username: "",
      displayName: "Ada Lovelace",
    });
    expect(renamed.status).toBe(200);
    expect(await seen()).toEqual({ name: "Ada Lovelace", picture: true });
  });
});
