import { describe, expect, it } from "vitest";
import {
  applySecurityHeaders,
  contentSecurityPolicy,
  createNonce,
} from "../../../app/lib/security-headers.server";

const options = {
  nonce: "abc123",
  supabaseOrigin: "https://x.supabase.co",
  dev: false,
  https: true,
};

const html = () =>
  new Response("<!doctype html>", { headers: { "Content-Type": "text/html; charset=utf-8" } });

describe("security headers", () => {
  it("makes a fresh, unguessable nonce per call", () => {
    const nonces = new Set(Array.from({ length: 50 }, createNonce));
    expect(nonces.size).toBe(50);
    for (const nonce of nonces) expect(atob(nonce)).toHaveLength(16);
  });

  it("puts a nonce-based CSP that forbids framing on HTML responses", () => {
    const csp = applySecurityHeaders(html(), options).headers.get("Content-Security-Policy") ?? "";
    expect(csp).toContain("script-src 'self' 'nonce-abc123'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).toContain("connect-src 'self' https://x.supabase.co wss://x.supabase.co;");
    expect(csp).toContain("object-src 'none'");
    expect(csp).not.toContain("unsafe-inline");
    expect(csp).not.toContain("unsafe-eval");
  });

  it("lets the browser reach the project's Realtime socket, and no other, in every build", () => {
    const local = contentSecurityPolicy({
      ...options,
      supabaseOrigin: "http://127.0.0.1:54321",
      https: false,
    });
    expect(local).toContain("connect-src 'self' http://127.0.0.1:54321 ws://127.0.0.1:54321;");
    const hosted = contentSecurityPolicy(options);
    expect(hosted).toContain("connect-src 'self' https://x.supabase.co wss://x.supabase.co;");
    expect(hosted).not.toMatch(/connect-src[^;]* (ws|wss):[ ;]/);
    // no Supabase URL: nothing to connect to
    const none = contentSecurityPolicy({ ...options, supabaseOrigin: "'none'" });
    expect(none).toContain("connect-src 'self' 'none';");
  });

  it("relaxes only what Vite's dev server needs in dev", () => {
    const csp = contentSecurityPolicy({ ...options, dev: true, https: false });
    expect(csp).toContain("style-src 'self' 'unsafe-inline'");
    expect(csp).toContain("ws:");
    expect(csp).toContain("script-src 'self' 'nonce-abc123'");
    expect(csp).not.toContain("upgrade-insecure-requests");
  });

  it("sets the other headers on every response, HSTS only over https", () => {
    const json = applySecurityHeaders(Response.json({}), { ...options, https: false });
    expect(json.headers.get("X-Content-Type-Options")).toBe("nosniff");
    expect(json.headers.get("Referrer-Policy")).toBe("strict-origin-when-cross-origin");
    expect(json.headers.get("Strict-Transport-Security")).toBeNull();
    expect(json.headers.get("Content-Security-Policy")).toBeNull();
    const secure = applySecurityHeaders(html(), options);
    expect(secure.headers.get("Strict-Transport-Security")).toMatch(/max-age=\d+/);
  });

  it("copies responses whose headers are immutable", async () => {
    const redirect = Response.redirect("https://app.test/next", 302);
    const result = applySecurityHeaders(redirect, options);
    expect(result.status).toBe(302);
    expect(result.headers.get("Location")).toBe("https://app.test/next");
    expect(result.headers.get("X-Content-Type-Options")).toBe("nosniff");
  });
});
