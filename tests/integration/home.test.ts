import { describe, expect, it } from "vitest";
import { backendCalls, backendIsUp, get, STORAGE_KEY } from "./support/app";

describe("home page through the Worker", () => {
  it("renders signed out with 200, no auth round trip, within 2 s", async () => {
    const { response, body, ms } = await get("/");
    expect(response.status).toBe(200);
    expect(body).toContain('data-testid="signed-out"');
    expect(backendCalls(response)).toEqual({ auth: 0, rest: 0 });
    expect(response.headers.get("Set-Cookie")).toBeNull();
    expect(ms).toBeLessThan(2000);
  });

  it("says the backend is unreachable exactly when it is", async () => {
    const up = await backendIsUp();
    const { body } = await get("/");
    expect(body.includes('data-testid="backend-unreachable"')).toBe(!up);
  });

  it("sends the security headers with a per-request nonce that matches the inline scripts", async () => {
    const first = await get("/");
    const second = await get("/");
    const csp = first.response.headers.get("Content-Security-Policy") ?? "";
    const nonce = /'nonce-([^']+)'/.exec(csp)?.[1];
    expect(nonce).toBeTruthy();
    expect(csp).toContain("frame-ancestors 'none'");
    expect(second.response.headers.get("Content-Security-Policy")).not.toContain(nonce);
    const inlineScripts = [...first.body.matchAll(/<script(?![^>]*\bsrc=)([^>]*)>/g)];
    expect(inlineScripts.length).toBeGreaterThan(0);
    for (const [, attributes] of inlineScripts) expect(attributes).toContain(`nonce="${nonce}"`);
    expect(first.response.headers.get("X-Content-Type-Options")).toBe("nosniff");
    expect(first.response.headers.get("Referrer-Policy")).toBe("strict-origin-when-cross-origin");
  });

  it("shows a real 404 page inside the layout for unknown URLs", async () => {
    const { response, body } = await get("/no/such/page");
    expect(response.status).toBe(404);
    expect(body).toContain("Page not found");
    expect(body).toContain("Go to the home page");
  });

  it.each([
    ["garbage", `${STORAGE_KEY}=garbage`],
    ["bad base64", `${STORAGE_KEY}=base64-%%%`],
    ["not JSON", `${STORAGE_KEY}=base64-bm90IGpzb24`],
    ["a stray chunk", `${STORAGE_KEY}.1=base64-eyJh`],
    [
      "a forged token",
      `${STORAGE_KEY}=base64-${Buffer.from(
        JSON.stringify({
          access_token: `eyJhbGciOiJFUzI1NiIsImtpZCI6ImZvcmdlZCIsInR5cCI6IkpXVCJ9.${Buffer.from(
            JSON.stringify({ sub: "x", role: "service_role", exp: 9999999999 }),
          ).toString("base64url")}.c2lnbmF0dXJl`,
          refresh_token: "nope",
          expires_at: 9999999999,
          expires_in: 3600,
          token_type: "bearer",
          user: { id: "x" },
        }),
      ).toString("base64url")}`,
    ],
  ])("renders signed out with 200 for a broken cookie (%s)", async (_name, cookie) => {
    const { response, body } = await get("/", cookie);
    expect(response.status).toBe(200);
    expect(body).toContain('data-testid="signed-out"');
  });
});
