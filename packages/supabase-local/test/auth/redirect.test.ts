// redirect_to as the real service checks it (utilities.IsRedirectURLValid, on Go's url.Parse): the
// site itself when scheme, host and port match (any port on a loopback host, RFC 8252), a loopback
// IP, or an additional_redirect_urls glob; nothing with a control character or a space, nothing
// Go cannot parse. Anything else is ignored and the link goes to site_url instead.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { anonClient, authFetch, randomEmail } from "../../../../tests/support/backend.ts";
import { latestMessage } from "../../../../tests/support/inbox.ts";
import { type MemoryBackend, memoryBackend } from "../../../../tests/support/memory-backend.ts";

const SITE = "http://localhost:5173";

/** The redirect the emailed link carries when a sign-in link is asked for with `redirectTo`. */
async function linkTarget(redirectTo: string): Promise<string | undefined> {
  const email = randomEmail("redirect");
  const { error } = await anonClient().auth.signInWithOtp({
    email,
    options: { emailRedirectTo: redirectTo },
  });
  expect(error).toBeNull();
  return (await latestMessage(email)).redirectTo;
}

describe("redirect_to against site_url http://localhost:5173 (config.toml)", () => {
  const refused: Array<[string, string]> = [
    [
      "javascript: with the site as its host",
      "javascript://localhost:5173/%0aalert(document.domain)",
    ],
    ["javascript: in mixed case", "JaVaScRiPt://localhost:5173/%0Aalert(1)"],
    ["javascript: without a host", "javascript:alert(1)"],
    ["data:", "data:text/html,<script>alert(1)</script>"],
    ["another scheme on the site's host", "https://localhost:5173/x"],
    ["the site as userinfo", "http://localhost:5173@evil.example/x"],
    ["a backslash before the userinfo", "http://evil.example\\@localhost:5173/x"],
    ["a backslash after the port", "http://localhost:5173\\@evil.example/x"],
    ["backslashes for slashes", "http:\\\\evil.example/x"],
    ["a scheme-relative URL", "//evil.example/x"],
    ["the site's host as a prefix", "http://localhost:5173.evil.example/x"],
    ["the site in the path", "http://evil.example/http://localhost:5173/"],
    ["a raw newline", "http://localhost:5173/\nSet-Cookie:x=1"],
    ["a raw tab in the host", "http://local\thost:5173/x"],
    ["a leading tab", "\thttp://evil.example/x"],
    ["a space", "http://localhost:5173/a b"],
    ["a DEL character", "http://localhost:5173/\u007f"],
    ["a malformed escape", "http://localhost:5173/%zz"],
    ["the host in capitals (hosts are compared as written)", "http://LOCALHOST:5173/x"],
    ["a decimal IP", "http://2130706433:5173/x"],
    ["a private IP", "http://10.0.0.1:5173/x"],
    ["an empty host", "http:///evil.example"],
  ];

  it.each(refused)("ignores %s: the link goes to site_url", async (_name, payload) => {
    expect(await linkTarget(payload)).toBe(SITE);
  });

  const allowed: Array<[string, string]> = [
    ["a path, query and fragment of the site", "http://localhost:5173/notes?x=1#top"],
    ["the scheme in capitals (schemes are case-insensitive)", "HTTP://localhost:5173/x"],
    ["another port of a loopback site (RFC 8252)", "http://localhost:6006/callback"],
    ["a loopback IP", "http://127.0.0.1:9999/callback"],
  ];

  it.each(allowed)("keeps %s", async (_name, payload) => {
    expect(await linkTarget(payload)).toBe(payload);
  });

  it("GET /verify sends a refused redirect_to's error to site_url instead", async () => {
    for (const payload of ["javascript://localhost:5173/%0aalert(1)", "http://local\thost:5173/"]) {
      const response = await authFetch(
        `/verify?token=nope&type=signup&redirect_to=${encodeURIComponent(payload)}`,
      );
      expect(response.status).toBe(303);
      const location = new URL(response.headers.get("location") ?? "");
      expect(`${location.origin}${location.pathname}`).toBe(`${SITE}/`);
      expect(new URLSearchParams(location.hash.slice(1)).get("error_code")).toBe("otp_expired");
    }
  });
});

describe("redirect_to against a hosted-style site_url (https, no port)", () => {
  let local: MemoryBackend;
  const site = "https://notes.example.com";

  beforeAll(async () => {
    local = await memoryBackend({
      auth: {
        siteUrl: site,
        additionalRedirectUrls: [
          "https://*.preview.example.com/**",
          "com.example.notes://callback",
        ],
      },
    });
  }, 60_000);
  afterAll(() => local?.close());

  async function target(redirectTo: string) {
    const email = randomEmail("hosted-redirect");
    const { error } = await local
      .client()
      .auth.signInWithOtp({ email, options: { emailRedirectTo: redirectTo } });
    expect(error).toBeNull();
    return local.backend.inbox.list(email)[0]?.redirectTo;
  }

  it("the site needs the same scheme and port", async () => {
    expect(await target(`${site}/notes`)).toBe(`${site}/notes`);
    expect(await target("http://notes.example.com/notes")).toBe(site);
    expect(await target("https://notes.example.com:8443/notes")).toBe(site);
  });

  it("globs: '*' stops at '.' and '/'; the fragment is not matched; other schemes by the list", async () => {
    expect(await target("https://pr-7.preview.example.com/x/y")).toBe(
      "https://pr-7.preview.example.com/x/y",
    );
    expect(await target("https://a.b.preview.example.com/x")).toBe(site);
    expect(await target("https://evil.example/.preview.example.com/x")).toBe(site);
    expect(await target("com.example.notes://callback#done")).toBe(
      "com.example.notes://callback#done",
    );
    expect(await target("com.example.notes://callback/other")).toBe(site);
  });
});
