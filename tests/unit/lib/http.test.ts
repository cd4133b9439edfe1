import { describe, expect, it, vi } from "vitest";
import {
  backendFailure,
  dataNoStore,
  NO_STORE,
  noStore,
  noStoreHeaders,
  notFound,
  redirectNoStore,
} from "../../../app/lib/http.server";

function thrownBy(fn: () => unknown): { data: unknown; init: ResponseInit | null } {
  try {
    fn();
  } catch (error) {
    return error as { data: unknown; init: ResponseInit | null };
  }
  throw new Error("expected a throw");
}

describe("no-store answers", () => {
  it("say private, no-store and nothing else about caching", () => {
    expect(NO_STORE).toBe("private, no-store");
    expect(noStoreHeaders()).toEqual({ "Cache-Control": "private, no-store" });
  });

  it("noStore keeps the status and the other headers, and overrides a cacheable Cache-Control", () => {
    expect(
      noStore({
        status: 409,
        statusText: "Conflict",
        headers: { "X-Test": "1", "Cache-Control": "public, max-age=60" },
      }),
    ).toEqual({
      status: 409,
      statusText: "Conflict",
      headers: { "X-Test": "1", "Cache-Control": "private, no-store" },
    });
    expect(noStore()).toEqual({ headers: { "Cache-Control": "private, no-store" } });
  });

  it("dataNoStore carries the value, the status and the header", () => {
    const answer = dataNoStore({ ok: true }, { status: 503 });
    expect(answer.data).toEqual({ ok: true });
    expect(answer.init).toEqual({ status: 503, headers: { "Cache-Control": "private, no-store" } });
  });

  it("redirectNoStore answers 303 unless told otherwise, never cached", () => {
    const seeOther = redirectNoStore("/notes?x=1");
    expect(seeOther.status).toBe(303);
    expect(seeOther.headers.get("Location")).toBe("/notes?x=1");
    expect(seeOther.headers.get("Cache-Control")).toBe("private, no-store");
    const found = redirectNoStore("/notes/1", 302);
    expect(found.status).toBe(302);
    expect(found.headers.get("Cache-Control")).toBe("private, no-store");
  });
});

describe("error pages", () => {
  it("notFound throws the 404 the root error boundary draws", () => {
    const thrown = thrownBy(notFound);
    expect(thrown.data).toBeNull();
    expect(thrown.init).toMatchObject({ status: 404, statusText: "Not Found" });
  });

  it("backendFailure throws a 503 naming the data API's code, never a 500", () => {
    const log = vi.spyOn(console, "error").mockImplementation(() => {});
    try {
      const thrown = thrownBy(() =>
        backendFailure({ code: "PGRST000", message: "down", details: "", hint: "" } as never),
      );
      expect(thrown.init).toMatchObject({ status: 503 });
      expect(thrown.data).toEqual({ code: "PGRST000" });
      expect(thrownBy(() => backendFailure(null)).data).toEqual({ code: "unexpected" });
    } finally {
      log.mockRestore();
    }
  });
});
