import { describe, expect, it } from "vitest";
import { backendCalls, get, STORAGE_KEY } from "../support/app";
import { cookieHeader, decodeSession, encodeSession, signedInUser } from "../support/session";

// The test backend (tests/setup/local-backend.ts) issues real ES256 sessions.
describe("a real session through the Worker", () => {
  it("reads a valid session cookie and hands its claims to the loader", async () => {
    const user = await signedInUser();
    const { response, body } = await get("/", user.cookie);
    expect(response.status).toBe(200);
    expect(body).toContain(user.email);
    expect(body).toContain(user.userId);
    expect(response.headers.get("Cache-Control")).toContain("no-store");
  });

  it("verifies warm signed-in requests without a round trip to the auth server", async () => {
    const user = await signedInUser();
    await get("/", user.cookie); // may fetch the JWKS once if the isolate is cold
    for (let i = 0; i < 3; i++) {
      const { response, body } = await get("/", user.cookie);
      expect(body).toContain(user.email);
      expect(backendCalls(response).auth).toBe(0);
    }
  });

  it("refreshes an expired session: new cookies on a private, no-store response", async () => {
    const user = await signedInUser();
    const value = user.jar.get(STORAGE_KEY);
    if (!value) throw new Error("expected a single-chunk session cookie");
    const session = decodeSession(value);
    const jar = new Map([[STORAGE_KEY, encodeSession({ ...session, expires_at: 1 })]]);
    const { response, body } = await get("/", cookieHeader(jar));
    expect(response.status).toBe(200);
    expect(body).toContain(user.email);
    const setCookie = response.headers.getSetCookie().join("\n");
    expect(setCookie).toContain(`${STORAGE_KEY}=base64-`);
    expect(response.headers.get("Cache-Control")).toMatch(/private/);
    expect(response.headers.get("Cache-Control")).toMatch(/no-store/);
  });

  it("renders signed out with 200 when the session was tampered with", async () => {
    const user = await signedInUser();
    const value = user.jar.get(STORAGE_KEY);
    if (!value) throw new Error("expected a single-chunk session cookie");
    const session = decodeSession(value) as { access_token: string };
    const [header, payload, signature] = session.access_token.split(".");
    const claims = JSON.parse(Buffer.from(payload ?? "", "base64url").toString());
    const forgedPayload = Buffer.from(JSON.stringify({ ...claims, role: "service_role" })).toString(
      "base64url",
    );
    const forged = { ...session, access_token: `${header}.${forgedPayload}.${signature}` };
    const { response, body } = await get("/", `${STORAGE_KEY}=${encodeSession(forged)}`);
    expect(response.status).toBe(200);
    expect(body).toContain('data-testid="signed-out"');
    expect(body).not.toContain(user.email);
  });
});
