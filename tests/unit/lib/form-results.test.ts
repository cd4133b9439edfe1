import { AuthApiError, AuthRetryableFetchError } from "@supabase/supabase-js";
import { describe, expect, it } from "vitest";
import {
  authFailure,
  formFailure,
  formNotice,
  formRefusal,
} from "../../../app/lib/form-results.server";

const NO_STORE = { "Cache-Control": "private, no-store" };

describe("authFailure (the one answer to an auth server refusal, on every form)", () => {
  it("puts the message beside the field it concerns, keeps the code and the server's 4xx", () => {
    const answer = authFailure(new AuthApiError("exists", 422, "email_exists"), { email: "a@b.c" });
    expect(answer.init).toEqual({ status: 422, headers: NO_STORE });
    expect(answer.data).toMatchObject({
      ok: false,
      errors: {
        fields: { email: "An account with this email already exists. Sign in instead." },
        form: undefined,
        code: "email_exists",
      },
      values: { email: "a@b.c" },
    });
    expect(answer.data).not.toHaveProperty("unconfirmed");
  });

  it("answers 503, never a 500, when the server failed or could not be reached", () => {
    expect(authFailure(new AuthApiError("boom", 500, "unexpected_failure"), {}).init).toEqual({
      status: 503,
      headers: NO_STORE,
    });
    const unreachable = authFailure(new AuthRetryableFetchError("fetch failed", 0), {});
    expect(unreachable.init?.status).toBe(503);
    expect(unreachable.data.errors.code).toBe("backend_unreachable");
    expect(unreachable.data.errors.form).toMatch(/can't be reached/);
  });

  it("takes a page's own wording for a code, and its place", () => {
    const answer = authFailure(
      new AuthApiError("exists", 422, "email_exists"),
      {},
      { wording: { email_exists: { place: "email", message: "Another account uses it." } } },
    );
    expect(answer.data.errors.fields).toEqual({ email: "Another account uses it." });
    const onForm = authFailure(
      new AuthApiError("same", 422, "same_password"),
      {},
      { wording: { same_password: { place: "form", message: "Pick another." } } },
    );
    expect(onForm.data.errors).toMatchObject({ fields: {}, form: "Pick another." });
  });

  it("says when the address is unconfirmed, so the page offers to resend", () => {
    const error = new AuthApiError("not confirmed", 400, "email_not_confirmed");
    expect(authFailure(error, {}, { unconfirmed: true }).data.unconfirmed).toBe(true);
    expect(authFailure(error, {}, { unconfirmed: false }).data.unconfirmed).toBe(false);
  });

  it("keeps the server's wait on rate limits", () => {
    const error = new AuthApiError(
      "For security purposes, you can only request this after 42 seconds.",
      429,
      "over_email_send_rate_limit",
    );
    const answer = authFailure(error, {});
    expect(answer.init?.status).toBe(429);
    expect(answer.data.errors.retryAfter).toBe(42);
  });
});

describe("the app's own form answers", () => {
  it("formRefusal: beside the field when one is named, else above the form", () => {
    const beside = formRefusal("Taken.", 409, "taken", { name: "x" }, "name");
    expect(beside.init).toEqual({ status: 409, headers: NO_STORE });
    expect(beside.data).toEqual({
      ok: false,
      errors: { fields: { name: "Taken." }, form: undefined, code: "taken" },
      values: { name: "x" },
    });
    const above = formRefusal("Gone.", 404, "gone");
    expect(above.data.errors).toEqual({ fields: {}, form: "Gone.", code: "gone" });
    expect(above.data.values).toEqual({});
  });

  it("formFailure: 400 unless told otherwise, with the errors and values only", () => {
    const answer = formFailure({
      ok: false,
      errors: { fields: { title: "Give the note a title." } },
      values: { title: "" },
      unconfirmed: true,
    });
    expect(answer.init).toEqual({ status: 400, headers: NO_STORE });
    expect(answer.data).toEqual({
      ok: false,
      errors: { fields: { title: "Give the note a title." } },
      values: { title: "" },
    });
    expect(formFailure({ errors: { fields: {} }, values: {} }, 429).init?.status).toBe(429);
  });

  it("formNotice: ok, the notice and what else the page needs, never cached", () => {
    const answer = formNotice("Saved.", { needsNonce: true });
    expect(answer.init).toEqual({ headers: NO_STORE });
    expect(answer.data).toEqual({ ok: true, notice: "Saved.", needsNonce: true });
  });
});
