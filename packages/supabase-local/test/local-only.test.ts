// Who may call what: the inbox, the OAuth provider page and the Auth admin API answer the
// developer's own tab, tests and servers, never another website the developer has open (no CORS,
// 403 for a foreign Origin, a cross-site embed or a DNS-rebinding host name); the APIs the browser
// clients call keep their CORS. Raw requests with the headers a browser would send.
import { request as httpRequest } from "node:http";
import { createClient } from "@supabase/supabase-js";
import { SignJWT } from "jose";
import { describe, expect, it } from "vitest";
import {
  ANON_KEY,
  adminClient,
  anonClient,
  BACKEND_URL,
  freshUser,
  PUBLISHABLE_KEY,
  randomEmail,
  SECRET_KEY,
  SERVICE_ROLE_KEY,
  signedInClient,
} from "../../../tests/support/backend.ts";
import { latestMessage, messagesFor } from "../../../tests/support/inbox.ts";
import { expectRedirect, followOAuth } from "../../../tests/support/oauth.ts";
import { KEYS } from "../src/project/keys.ts";

const EVIL = "https://evil.example";
const APP = "http://localhost:5173";
const PORT = new URL(BACKEND_URL).port;

const foreignRefusal = {
  message: "Forbidden: this local endpoint is not available to other websites",
  hint: "It is for the developer's own browser tab (open it directly), tests and servers; it sends no CORS headers.",
};

/** A cross-site fetch as a page on `origin` makes it (CORS mode). */
function fromSite(origin: string, init: RequestInit = {}): RequestInit {
  const headers = new Headers(init.headers);
  headers.set("Origin", origin);
  headers.set("Sec-Fetch-Site", "cross-site");
  headers.set("Sec-Fetch-Mode", "cors");
  headers.set("User-Agent", "Mozilla/5.0 (X11; Linux x86_64) Chrome/140.0 Safari/537.36");
  return { ...init, headers, redirect: "manual" };
}

/**
 * A request with exactly these headers. Node's fetch always sends Sec-Fetch-Mode: cors and its own
 * Host, so a navigation or another host name needs node:http.
 */
function raw(
  url: string,
  headers: Record<string, string>,
  body?: string,
): Promise<{ status: number; headers: Headers; text: string }> {
  return new Promise((resolve, reject) => {
    const method = body === undefined ? "GET" : "POST";
    const req = httpRequest(url, { method, headers }, (res) => {
      let text = "";
      res.setEncoding("utf8");
      res.on("data", (chunk: string) => {
        text += chunk;
      });
      res.on("end", () => {
        const out = new Headers();
        for (const [name, value] of Object.entries(res.headers))
          if (typeof value === "string") out.set(name, value);
        resolve({ status: res.statusCode ?? 0, headers: out, text });
      });
    });
    req.on("error", reject);
    req.end(body);
  });
}

/** A top-level navigation from a link on another site (what the developer's tab sends). */
const NAVIGATION = {
  "Sec-Fetch-Site": "cross-site",
  "Sec-Fetch-Mode": "navigate",
  "Sec-Fetch-Dest": "document",
  "User-Agent": "Mozilla/5.0 (X11; Linux x86_64) Firefox/140.0",
};

async function expectRefused(response: Response, json = true) {
  expect(response.status).toBe(403);
  expect(response.headers.get("access-control-allow-origin")).toBeNull();
  expect(response.headers.get("access-control-allow-credentials")).toBeNull();
  const text = await response.text();
  if (json) expect(JSON.parse(text)).toEqual(foreignRefusal);
  else expect(text).toContain(foreignRefusal.message);
  return text;
}

/** A mail with a code and a link in the inbox, for a fresh address. */
async function mailWithSecrets() {
  const { email } = await freshUser();
  await anonClient().auth.signInWithOtp({ email });
  const mail = await latestMessage(email, "magic_link");
  expect(mail.token).toMatch(/^\d{6}$/);
  return { email, mail };
}

describe("the inbox is for the developer's own tab", () => {
  it("another website cannot read it: no CORS, 403, neither codes nor addresses in the answer", async () => {
    const { email, mail } = await mailWithSecrets();
    const to = encodeURIComponent(email);
    for (const path of [
      `/inbox/api/messages?to=${to}`,
      "/inbox/api/messages",
      `/inbox/api/messages/${mail.id}`,
    ]) {
      const text = await expectRefused(await fetch(`${BACKEND_URL}${path}`, fromSite(EVIL)));
      expect(text).not.toContain(mail.token);
      expect(text).not.toContain(email);
    }
    for (const path of [`/inbox?to=${to}`, "/inbox", `/inbox/messages/${mail.id}`]) {
      const text = await expectRefused(await fetch(`${BACKEND_URL}${path}`, fromSite(EVIL)), false);
      expect(text).not.toContain(mail.token);
    }
    // nor can it empty it, or ask first (preflight)
    await expectRefused(
      await fetch(
        `${BACKEND_URL}/inbox/api/messages?to=${to}`,
        fromSite(EVIL, { method: "DELETE" }),
      ),
    );
    const preflight = await fetch(
      `${BACKEND_URL}/inbox/api/messages`,
      fromSite(EVIL, {
        method: "OPTIONS",
        headers: { "Access-Control-Request-Method": "DELETE" },
      }),
    );
    await expectRefused(preflight);
    expect(await messagesFor(email)).toHaveLength(1);
  });

  it("the app's own origin is another website too, and so is a sandboxed page (Origin: null)", async () => {
    const { email } = await mailWithSecrets();
    const to = encodeURIComponent(email);
    await expectRefused(await fetch(`${BACKEND_URL}/inbox/api/messages?to=${to}`, fromSite(APP)));
    await expectRefused(
      await fetch(`${BACKEND_URL}/inbox/api/messages?to=${to}`, fromSite("null")),
    );
  });

  it("a page cannot embed it (a script, or a frame) even without an Origin header", async () => {
    const embedded = async (dest: string, mode: string) => {
      const answer = await raw(`${BACKEND_URL}/inbox`, {
        ...NAVIGATION,
        "Sec-Fetch-Mode": mode,
        "Sec-Fetch-Dest": dest,
      });
      return new Response(answer.text, { status: answer.status, headers: answer.headers });
    };
    await expectRefused(await embedded("script", "no-cors"), false);
    await expectRefused(await embedded("iframe", "navigate"), false);
    // a link from another site may open the pages, not the JSON (nor the admin API, ?apikey=)
    for (const path of ["/inbox/api/messages", `/auth/v1/admin/users?apikey=${SERVICE_ROLE_KEY}`]) {
      const answer = await raw(`${BACKEND_URL}${path}`, NAVIGATION);
      await expectRefused(
        new Response(answer.text, { status: answer.status, headers: answer.headers }),
      );
    }
  });

  it("the developer's tab, tests and tools read it; the page cannot be framed", async () => {
    const { email, mail } = await mailWithSecrets();
    const to = encodeURIComponent(email);
    // a link followed from another site opens the page in the developer's own tab
    const opened = await raw(`${BACKEND_URL}/inbox?to=${to}`, NAVIGATION);
    expect(opened.status).toBe(200);
    expect(opened.text).toContain(mail.token);
    expect(opened.headers.get("x-frame-options")).toBe("DENY");
    expect(opened.headers.get("content-security-policy")).toBe("frame-ancestors 'none'");
    // the page's own script (same origin, under either loopback name), and a test (no Origin)
    for (const origin of [BACKEND_URL, `http://localhost:${PORT}`]) {
      const own = await fetch(`${BACKEND_URL}/inbox/api/messages?to=${to}`, {
        headers: { Origin: origin, "Sec-Fetch-Site": "same-origin" },
      });
      expect(own.status).toBe(200);
      expect(own.headers.get("access-control-allow-origin")).toBeNull();
      expect((await own.json()).messages[0].token).toBe(mail.token);
    }
    expect((await messagesFor(email))[0]?.token).toBe(mail.token);
  });

  it("a DNS-rebinding page (a foreign name resolving to 127.0.0.1) is refused", async () => {
    const { email, mail } = await mailWithSecrets();
    const host = `rebound.example:${PORT}`;
    const answer = await raw(`${BACKEND_URL}/inbox/api/messages?to=${encodeURIComponent(email)}`, {
      Host: host,
      Origin: `http://${host}`,
      "Sec-Fetch-Site": "same-origin",
    });
    expect(answer.status).toBe(403);
    expect(JSON.parse(answer.text)).toEqual({
      message: 'Forbidden: the local backend does not answer to the host name "rebound.example"',
      hint: "Open it as http://127.0.0.1 or http://localhost (another name resolving here could be a DNS-rebinding page).",
    });
    expect(answer.text).not.toContain(mail.token);
  });
});

describe("the provider page", () => {
  async function providerPageUrl() {
    const { location } = await expectRedirect(
      fetch,
      `${BACKEND_URL}/auth/v1/authorize?provider=github&redirect_to=${encodeURIComponent(`${APP}/auth/callback`)}`,
    );
    expect(new URL(location).pathname).toBe("/provider/github/authorize");
    return location;
  }

  it("does not show recent accounts to another website, nor take its form posts", async () => {
    const email = randomEmail("known-account");
    const client = anonClient({ flowType: "pkce" });
    const { data } = await client.auth.signInWithOAuth({
      provider: "github",
      options: { redirectTo: `${APP}/auth/callback`, skipBrowserRedirect: true },
    });
    const landed = await followOAuth(fetch, data.url ?? "", { email });
    expect(landed.searchParams.get("code")).toBeTruthy();

    const page = await providerPageUrl();
    const read = await fetch(page, fromSite(EVIL));
    expect(await expectRefused(read, false)).not.toContain(email);

    const state = new URL(page).searchParams.get("state") ?? "";
    const posted = await fetch(
      page.split("?")[0] as string,
      fromSite(EVIL, {
        method: "POST",
        headers: { "Content-Type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams({ state, decision: "allow", email: "victim@example.com" }),
      }),
    );
    await expectRefused(posted, false);
  });

  it("opens when the OAuth redirect brings the developer's tab there from the app", async () => {
    const page = await providerPageUrl();
    const opened = await raw(page, NAVIGATION);
    expect(opened.status).toBe(200);
    expect(opened.text).toContain('name="state"');
    expect(opened.headers.get("x-frame-options")).toBe("DENY");
  });
});

describe("the Auth admin API", () => {
  it("refuses other websites whatever the key, without CORS", async () => {
    const { user } = await freshUser();
    const inits: RequestInit[] = [
      { headers: { apikey: SECRET_KEY } },
      { headers: { apikey: SERVICE_ROLE_KEY, Authorization: `Bearer ${SERVICE_ROLE_KEY}` } },
    ];
    for (const init of inits) {
      const listed = await fetch(`${BACKEND_URL}/auth/v1/admin/users`, fromSite(EVIL, init));
      expect(await expectRefused(listed)).not.toContain(user.id);
      const deleted = await fetch(
        `${BACKEND_URL}/auth/v1/admin/users/${user.id}`,
        fromSite(EVIL, { ...init, method: "DELETE" }),
      );
      await expectRefused(deleted);
    }
    const invited = await fetch(
      `${BACKEND_URL}/auth/v1/invite`,
      fromSite(EVIL, {
        method: "POST",
        headers: { apikey: SERVICE_ROLE_KEY, "Content-Type": "application/json" },
        body: JSON.stringify({ email: randomEmail("invited") }),
      }),
    );
    await expectRefused(invited);
    const preflight = await fetch(
      `${BACKEND_URL}/auth/v1/admin/users`,
      fromSite(EVIL, {
        method: "OPTIONS",
        headers: {
          "Access-Control-Request-Method": "GET",
          "Access-Control-Request-Headers": "apikey, authorization",
        },
      }),
    );
    await expectRefused(preflight);
    // a percent-encoded path reaches the same handler, and the same refusal
    await expectRefused(
      await fetch(
        `${BACKEND_URL}/auth/v1/%61dmin/users`,
        fromSite(EVIL, { headers: { apikey: SECRET_KEY } }),
      ),
    );
    // the user is still there (a server, with no Origin, asks)
    const still = await fetch(`${BACKEND_URL}/auth/v1/admin/users/${user.id}`, {
      headers: { apikey: SECRET_KEY },
    });
    expect(still.status).toBe(200);
  });
});

describe("the APIs keep the CORS the browser clients need, for the project's own pages", () => {
  it("Auth and the data API answer preflights and requests from the app's origins", async () => {
    for (const origin of [APP, "http://127.0.0.1:5173"]) {
      for (const path of ["/auth/v1/token?grant_type=password", "/rest/v1/notes"]) {
        const preflight = await fetch(`${BACKEND_URL}${path}`, {
          method: "OPTIONS",
          headers: {
            Origin: origin,
            "Access-Control-Request-Method": "POST",
            "Access-Control-Request-Headers": "apikey, authorization, content-type, x-client-info",
          },
        });
        expect(preflight.status).toBe(204);
        expect(preflight.headers.get("access-control-allow-origin")).toBe(origin);
        expect(preflight.headers.get("access-control-allow-headers")).toContain("apikey");
      }
    }
    const settings = await fetch(
      `${BACKEND_URL}/auth/v1/settings`,
      fromSite(APP, { headers: { apikey: PUBLISHABLE_KEY } }),
    );
    expect(settings.status).toBe(200);
    expect(settings.headers.get("access-control-allow-origin")).toBe(APP);
    const rows = await fetch(
      `${BACKEND_URL}/rest/v1/notes?select=id`,
      fromSite(APP, {
        headers: { apikey: PUBLISHABLE_KEY },
      }),
    );
    // an error is readable too (anon may not read notes: PostgREST's 401)
    expect(rows.status).toBe(401);
    expect(rows.headers.get("access-control-allow-origin")).toBe(APP);
    expect(rows.headers.get("access-control-expose-headers")).toContain("Content-Range");
  });

  it("another website gets no CORS headers at all, on a preflight or a request", async () => {
    for (const origin of [EVIL, "null", "http://localhost:5999"]) {
      const settings = await fetch(
        `${BACKEND_URL}/auth/v1/settings`,
        fromSite(origin, { headers: { apikey: PUBLISHABLE_KEY } }),
      );
      expect(settings.status).toBe(200);
      expectNoCors(settings);
      const preflight = await fetch(
        `${BACKEND_URL}/rest/v1/notes`,
        fromSite(origin, {
          method: "OPTIONS",
          headers: {
            "Access-Control-Request-Method": "GET",
            "Access-Control-Request-Headers": "apikey, authorization",
          },
        }),
      );
      expectNoCors(preflight);
    }
  });
});

function expectNoCors(response: Response) {
  for (const name of [
    "access-control-allow-origin",
    "access-control-allow-credentials",
    "access-control-allow-headers",
    "access-control-allow-methods",
    "access-control-expose-headers",
  ]) {
    expect(response.headers.get(name), name).toBeNull();
  }
}

const privilegedRefusal = {
  message: "Forbidden use of a service_role or HS256 JWT from another origin",
  hint: "The local backend accepts the service_role key and tokens signed with its public JWT secret only from servers and from the project's own pages (the origins of auth.site_url and auth.additional_redirect_urls, and [api] cors_origins in supabase/local-backend.toml).",
};

/** A note of a fresh user's, made as that user: what an attacker would read or change. */
async function victimNote() {
  const { client, session } = await signedInClient();
  const title = `secret ${crypto.randomUUID()}`;
  const { data, error } = await client.from("notes").insert({ title }).select("id").single();
  if (error) throw error;
  return { id: data.id as string, title, user: session.user };
}

/** An HS256 token over the CLI's public JWT secret, as anyone can mint one. */
function minted(claims: Record<string, unknown>) {
  return new SignJWT(claims)
    .setProtectedHeader({ alg: "HS256", typ: "JWT" })
    .setIssuedAt()
    .setExpirationTime("1h")
    .sign(new TextEncoder().encode(KEYS.jwtSecret));
}

describe("the service role from another website (issue 37: any page could read every note)", () => {
  it("an attacker's page cannot read all notes with the service_role JWT", async () => {
    const note = await victimNote();
    const inits: RequestInit[] = [
      { headers: { apikey: SERVICE_ROLE_KEY } },
      { headers: { apikey: SERVICE_ROLE_KEY, Authorization: `Bearer ${SERVICE_ROLE_KEY}` } },
      { headers: { apikey: PUBLISHABLE_KEY, Authorization: `Bearer ${SERVICE_ROLE_KEY}` } },
    ];
    for (const origin of [EVIL, "null", "http://localhost:5999"]) {
      for (const init of inits) {
        const response = await fetch(
          `${BACKEND_URL}/rest/v1/notes?select=*`,
          fromSite(origin, init),
        );
        expect(response.status).toBe(401);
        expectNoCors(response);
        const text = await response.text();
        expect(JSON.parse(text)).toEqual(privilegedRefusal);
        expect(text).not.toContain(note.title);
      }
    }
    // nor through Auth (a user's data as the admin API would give it is local-only anyway)
    const user = await fetch(
      `${BACKEND_URL}/auth/v1/user`,
      fromSite(EVIL, { headers: { apikey: SERVICE_ROLE_KEY } }),
    );
    expect(user.status).toBe(401);
    expect(await user.json()).toEqual(privilegedRefusal);
  });

  it("nor with any HS256 token signed with the public JWT secret (the victim's, or the service role's)", async () => {
    const note = await victimNote();
    const asVictim = await minted({
      sub: note.user.id,
      role: "authenticated",
      aud: "authenticated",
      aal: "aal2",
      session_id: crypto.randomUUID(),
    });
    const asService = await minted({ role: "service_role" });
    for (const token of [asVictim, asService, ANON_KEY]) {
      for (const init of [
        { headers: { apikey: PUBLISHABLE_KEY, Authorization: `Bearer ${token}` } },
        { headers: { apikey: ANON_KEY, Authorization: `Bearer ${token}` } },
      ]) {
        const response = await fetch(`${BACKEND_URL}/rest/v1/notes?select=*`, fromSite(EVIL, init));
        expect(response.status).toBe(401);
        expectNoCors(response);
        const text = await response.text();
        expect(JSON.parse(text)).toEqual(privilegedRefusal);
        expect(text).not.toContain(note.title);
      }
    }
  });

  it("a simple cross-site form POST with ?apikey= changes nothing (no preflight, no CORS needed)", async () => {
    const note = await victimNote();
    const form = {
      method: "POST",
      body: new URLSearchParams({ title: "written by evil.example" }),
    };
    const attempts: Array<[string, Record<string, string>]> = [
      // a form on the attacker's page
      [
        "cross-site form",
        { Origin: EVIL, "Sec-Fetch-Site": "cross-site", "Sec-Fetch-Mode": "navigate" },
      ],
      // from a sandboxed frame, or under Referrer-Policy: no-referrer
      [
        "Origin: null",
        { Origin: "null", "Sec-Fetch-Site": "cross-site", "Sec-Fetch-Mode": "navigate" },
      ],
      // an image or a link: a GET with no Origin at all, marked cross-site by the browser
      ["cross-site, no Origin", { "Sec-Fetch-Site": "cross-site", "Sec-Fetch-Mode": "no-cors" }],
      // another page on localhost (same-site, not one of the project's)
      ["same-site, no Origin", { "Sec-Fetch-Site": "same-site", "Sec-Fetch-Mode": "no-cors" }],
      // a browser that sends neither header
      ["no Origin, no Sec-Fetch-*", {}],
    ];
    for (const [what, headers] of attempts) {
      const answer = await raw(
        `${BACKEND_URL}/rest/v1/notes?apikey=${SERVICE_ROLE_KEY}`,
        {
          ...headers,
          "User-Agent": "Mozilla/5.0 (X11; Linux x86_64) Firefox/140.0",
          "Content-Type": "application/x-www-form-urlencoded",
        },
        form.body.toString(),
      );
      expect(answer.status, what).toBe(401);
      expect(JSON.parse(answer.text), what).toEqual(privilegedRefusal);
    }
    // and a GET the same way reads nothing
    const read = await raw(`${BACKEND_URL}/rest/v1/notes?select=title&apikey=${SERVICE_ROLE_KEY}`, {
      "Sec-Fetch-Site": "cross-site",
      "Sec-Fetch-Mode": "no-cors",
      "Sec-Fetch-Dest": "image",
      "User-Agent": "Mozilla/5.0 (X11; Linux x86_64) Firefox/140.0",
    });
    expect(read.status).toBe(401);
    expect(read.text).not.toContain(note.title);
    const { data } = await adminClient()
      .from("notes")
      .select("id")
      .eq("title", "written by evil.example");
    expect(data).toEqual([]);
  });

  it("a DNS-rebinding page (same-origin to itself, no Origin on its GETs) reaches no API", async () => {
    const note = await victimNote();
    const host = `rebound.example:${PORT}`;
    for (const path of [
      "/rest/v1/notes?select=*",
      `/rest/v1/notes?select=*&apikey=${SERVICE_ROLE_KEY}`,
      `/rest/v1/notes?select=*&apikey=${PUBLISHABLE_KEY}`,
      `/auth/v1/settings?apikey=${PUBLISHABLE_KEY}`,
      "/auth/v1/.well-known/jwks.json",
      "/auth/v1/verify?token=x&type=signup",
    ]) {
      const answer = await raw(`${BACKEND_URL}${path}`, {
        Host: host,
        "Sec-Fetch-Site": "same-origin",
        apikey: SERVICE_ROLE_KEY,
      });
      expect(answer.status, path).toBe(403);
      expect(JSON.parse(answer.text), path).toEqual({
        message: 'Forbidden: the local backend does not answer to the host name "rebound.example"',
        hint: "Open it as http://127.0.0.1 or http://localhost (another name resolving here could be a DNS-rebinding page).",
      });
      expect(answer.text).not.toContain(note.title);
    }
    // the loopback names and addresses are served
    for (const name of ["localhost", "127.0.0.1", "[::1]", "app.localhost"]) {
      const answer = await raw(`${BACKEND_URL}/auth/v1/health?apikey=${PUBLISHABLE_KEY}`, {
        Host: `${name}:${PORT}`,
      });
      expect(answer.status, name).toBe(200);
    }
  });
});

describe("what keeps working with the service role", () => {
  it("the official client from the app's origin, and a server with no Origin", async () => {
    const note = await victimNote();
    for (const origin of [APP, "http://127.0.0.1:5173", undefined]) {
      const client = createClient(BACKEND_URL, SERVICE_ROLE_KEY, {
        auth: { persistSession: false, autoRefreshToken: false, detectSessionInUrl: false },
        global: { headers: origin ? { Origin: origin, "Sec-Fetch-Site": "cross-site" } : {} },
      });
      const { data, error } = await client.from("notes").select("title").eq("id", note.id);
      expect(error, origin).toBeNull();
      expect(data, origin).toEqual([{ title: note.title }]);
    }
    // the developer typing the URL in the address bar (Sec-Fetch-Site: none)
    const typed = await raw(
      `${BACKEND_URL}/rest/v1/notes?select=title&id=eq.${note.id}&apikey=${SERVICE_ROLE_KEY}`,
      {
        "Sec-Fetch-Site": "none",
        "Sec-Fetch-Mode": "navigate",
        "User-Agent": "Mozilla/5.0 (X11; Linux x86_64) Firefox/140.0",
      },
    );
    expect(typed.status).toBe(200);
    expect(typed.text).toContain(note.title);
  });
});
