// [auth] minimum_password_length and password_requirements as Auth applies them: a new password
// (sign-up, a change, the admin API) must meet them, and a sign-in with an older password that
// no longer does still works and says so (`weak_password`), through the real supabase-js.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { randomEmail } from "../../../../tests/support/backend.ts";
import { type MemoryBackend, memoryBackend } from "../../../../tests/support/memory-backend.ts";

const EACH =
  "Password should contain at least one character of each: abcdefghijklmnopqrstuvwxyz, ABCDEFGHIJKLMNOPQRSTUVWXYZ, 0123456789, !@#$%^&*()_+-=[]{};'\\:\"|<>?,./`~.";

/** The same database under two settings: the CLI's defaults, and stricter rules. */
let lenient: MemoryBackend;
let strict: MemoryBackend;

beforeAll(async () => {
  lenient = await memoryBackend({ auth: { email: { enableConfirmations: false } } });
  strict = await memoryBackend({
    auth: {
      email: { enableConfirmations: false },
      minimumPasswordLength: 10,
      passwordRequiredCharacters: [
        "abcdefghijklmnopqrstuvwxyz",
        "ABCDEFGHIJKLMNOPQRSTUVWXYZ",
        "0123456789",
        "!@#$%^&*()_+-=[]{};'\\:\"|<>?,./`~",
      ],
    },
  });
}, 60_000);
afterAll(async () => {
  await lenient?.close();
  await strict?.close();
});

describe("password_requirements", () => {
  it("refuses a new password without a character of each set, and one too short, with both reasons", async () => {
    const signUp = (password: string) =>
      strict.client().auth.signUp({ email: randomEmail("strict"), password });
    const both = await signUp("weak");
    expect(both.error).toMatchObject({
      status: 422,
      code: "weak_password",
      message: `Password should be at least 10 characters. ${EACH}`,
      reasons: ["length", "characters"],
    });
    expect((await signUp("nosymbolUpper1")).error).toMatchObject({ reasons: ["characters"] });
    // a backslash and a colon are symbols (Auth's set escapes the colon it splits on)
    expect((await signUp("Backslash1\\x")).error).toBeNull();
    expect((await signUp("Colon:Upper1")).error).toBeNull();

    const admin = await strict.admin().auth.admin.createUser({
      email: randomEmail("strict-admin"),
      password: "lowercase-only-password",
    });
    expect(admin.error).toMatchObject({ status: 422, code: "weak_password" });
  });

  it("counts a password's length in bytes, as Go does", async () => {
    // seven characters, ten bytes: enough for minimum_password_length 10
    const accented = await strict
      .client()
      .auth.signUp({ email: randomEmail("bytes"), password: "Aa1!ééé" });
    expect(accented.error).toBeNull();
    // 40 characters of two bytes: 80 bytes, over bcrypt's 72
    const long = await lenient
      .client()
      .auth.signUp({ email: randomEmail("long"), password: "é".repeat(40) });
    expect(long.error).toMatchObject({
      status: 400,
      code: "validation_failed",
      message: "Password cannot be longer than 72 characters",
    });
  });

  it("a sign-in with a password the rules now call weak succeeds and reports weak_password", async () => {
    const email = randomEmail("older");
    const password = "shortlower";
    const created = await lenient.client().auth.signUp({ email, password });
    if (created.error) throw created.error;
    const { data, error } = await strict.client().auth.signInWithPassword({ email, password });
    expect(error).toBeNull();
    expect(data.session?.access_token).toBeTruthy();
    expect(data.weakPassword).toEqual({ message: EACH, reasons: ["characters"] });
    const under = await lenient.client().auth.signInWithPassword({ email, password });
    expect(under.data.weakPassword).toBeUndefined();
  });
});
