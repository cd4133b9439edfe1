// Sign-out scopes across two browsers of one person (two contexts: separate cookie jars, so two
// sessions). Runs on the 10-second-token stack, so the other browser's access token really
// expires within the test and its next request has to refresh, i.e. ask the auth server whether
// its session still exists. (Until then an access token stays valid, as with hosted Supabase:
// supabase-js keeps a session whose early refresh fails while its access token has not expired.)
import { describe } from "vitest";
import {
  expectSignedIn,
  expectSignedOut,
  freshUser,
  signInWithPassword,
  signOutHere,
  submit,
  visit,
} from "./support/flows.ts";
import { shortTokens as stack } from "./support/stacks.ts";
import { test } from "./support/test.ts";

const TOKEN_LIFETIME_MS = (stack.jwtExpiry ?? 3600) * 1000;

describe.each([
  { javaScriptEnabled: true, label: "JavaScript on" },
  { javaScriptEnabled: false, label: "JavaScript off" },
])("sign-out scopes ($label)", ({ javaScriptEnabled }) => {
  test("this device ends only this session; everywhere ends the other browser's too", async ({
    browser,
  }) => {
    const user = await freshUser(stack, "signout");
    const laptop = await browser.open({ javaScriptEnabled });
    const phone = await browser.open({ javaScriptEnabled });
    await signInWithPassword(laptop, stack, user);
    await signInWithPassword(phone, stack, user);

    // "Sign out" (local): the laptop is signed out; the phone's session lives on, even once the
    // access token it had has expired and its next request must refresh it.
    await signOutHere(laptop, stack);
    await visit(laptop, stack, "/");
    await expectSignedOut(laptop, stack);
    await phone.waitForTimeout(TOKEN_LIFETIME_MS + 2000);
    await visit(phone, stack, "/");
    await expectSignedIn(phone, stack, user.email, "/");

    // "Sign out everywhere" (global) from the laptop: the phone is signed out as soon as its access
    // token has expired (its refresh token was revoked with the session).
    await signInWithPassword(laptop, stack, user);
    await visit(laptop, stack, "/sign-out");
    await submit(laptop, "Sign out everywhere");
    await expectSignedOut(laptop, stack);
    const deadline = Date.now() + TOKEN_LIFETIME_MS + 5000;
    for (;;) {
      await visit(phone, stack, "/");
      if ((await phone.getByTestId("signed-out").count()) > 0) break;
      if (Date.now() > deadline) throw new Error("the phone is still signed in after expiry");
      await phone.waitForTimeout(1000);
    }
    await expectSignedOut(phone, stack);
    // It stays signed out.
    await visit(phone, stack, "/sign-out");
    await phone.getByRole("heading", { name: "You are signed out" }).waitFor();
  });
});
