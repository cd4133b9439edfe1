import { describe, expect, it } from "vitest";
import { safeNext } from "../../../app/lib/safe-redirect";
import {
  SESSION_ENDED,
  signInAgainLocation,
  watchForEndedSession,
} from "../../../app/lib/session-ended.server";

const BACKEND = "http://127.0.0.1:54321";

/** A fetch that answers every request with `status` and the JSON `body`. */
function answering(status: number, body: unknown): typeof fetch {
  return async () =>
    new Response(typeof body === "string" ? body : JSON.stringify(body), {
      status,
      headers: { "Content-Type": "application/json" },
    });
}

describe("watchForEndedSession", () => {
  it("notes the data API's ended-session refusal, and leaves the body to the client", async () => {
    const watch = watchForEndedSession(answering(401, { ...SESSION_ENDED, hint: null }));
    expect(watch.ended).toBe(false);
    const response = await watch.fetch(`${BACKEND}/rest/v1/notes?select=id`);
    expect(watch.ended).toBe(true);
    expect(await response.json()).toMatchObject({ code: "PT401" });
  });

  it("takes a Request as well as a URL", async () => {
    const watch = watchForEndedSession(answering(401, SESSION_ENDED));
    await watch.fetch(new Request(`${BACKEND}/rest/v1/rpc/list_my_sessions`, { method: "POST" }));
    expect(watch.ended).toBe(true);
  });

  it("ignores every other answer: other 401s, other services, bodies that are not JSON", async () => {
    const cases: [string, number, unknown][] = [
      ["/rest/v1/notes", 200, []],
      ["/rest/v1/notes", 401, { code: "42501", message: "permission denied for table notes" }],
      ["/rest/v1/notes", 401, { code: "PGRST303", message: "JWT expired" }],
      ["/rest/v1/notes", 401, { code: "PT401", message: "Some other refusal" }],
      ["/rest/v1/notes", 401, "<html>gateway</html>"],
      ["/auth/v1/user", 401, SESSION_ENDED],
    ];
    for (const [path, status, body] of cases) {
      const watch = watchForEndedSession(answering(status, body));
      await watch.fetch(`${BACKEND}${path}`);
      expect(watch.ended, `${path} ${status} ${JSON.stringify(body)}`).toBe(false);
    }
  });
});

describe("signInAgainLocation", () => {
  it("sends to sign in with the message, and back to the page afterwards", () => {
    expect(signInAgainLocation(safeNext("/notes?q=x"))).toBe(
      "/sign-in?next=%2Fnotes%3Fq%3Dx&ended=1",
    );
    expect(signInAgainLocation(undefined)).toBe("/sign-in?ended=1");
  });
});
