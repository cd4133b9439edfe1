// A 429 from Auth's per-address limits reads as "too many attempts, wait", on forms and on the
// pages email links land on (where "this link doesn't work" would send people for a new link).
import { describe, expect, it } from "vitest";
import { describeAuthError, linkProblem, linkProblemPage } from "../../../app/lib/auth-errors";

describe("Auth's rate limit (429 over_request_rate_limit)", () => {
  it("on a form: above it, with the code", () => {
    const info = describeAuthError({
      code: "over_request_rate_limit",
      status: 429,
      message: "Request rate limit reached",
    });
    expect(info).toMatchObject({ place: "form", code: "over_request_rate_limit" });
    expect(info.message).toMatch(/^Too many attempts/);
    // (a 429 without a code, as an older server answers, is the same)
    expect(describeAuthError({ status: 429 }).code).toBe("over_request_rate_limit");
  });

  it("on a link's landing page: wait and open the same link again", () => {
    expect(linkProblem("over_request_rate_limit")).toBe("rate-limited");
    for (const kind of ["sign-in", "recovery"] as const) {
      const page = linkProblemPage("rate-limited", kind);
      expect(page.title).toBe("Too many attempts");
      expect(page.todo).toMatch(/open the link from the email again/);
    }
  });
});
