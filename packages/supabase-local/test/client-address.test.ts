// The address rate limits and the audit log count is the socket's: X-Forwarded-For is written by
// whoever sends the request, so a default backend ignores it and one client cannot get a fresh
// bucket per request by inventing addresses. Only a backend told to trust a proxy header reads it,
// and Sb-Forwarded-For counts only from a server holding the secret key (as on hosted Supabase).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  ANON_KEY,
  PASSWORD,
  PUBLISHABLE_KEY,
  randomEmail,
  SECRET_KEY,
  SERVICE_ROLE_KEY,
} from "../../../tests/support/backend.ts";
import {
  type MemoryBackend,
  memoryBackend,
  workerDatabase,
} from "../../../tests/support/memory-backend.ts";
import { clientIp } from "../src/auth/http/request.ts";
import { createLocalBackend, type LocalBackend } from "../src/backend.ts";

const overRequestLimit = {
  code: 429,
  error_code: "over_request_rate_limit",
  msg: "Request rate limit reached",
};
const limits = { auth: { rateLimit: { signInSignUps: 2, tokenRefresh: 2, emailSent: 100 } } };

function recover(base: string, forwardedFor: string) {
  return {
    url: `${base}/auth/v1/recover`,
    init: {
      method: "POST",
      headers: {
        apikey: PUBLISHABLE_KEY,
        "Content-Type": "application/json",
        "X-Forwarded-For": forwardedFor,
      },
      body: JSON.stringify({ email: randomEmail("nobody") }),
    },
  };
}

describe("over a socket (the default: no proxy header trusted)", () => {
  let backend: LocalBackend;
  beforeAll(async () => {
    backend = await createLocalBackend({
      port: 0,
      host: "127.0.0.1",
      db: await workerDatabase(),
      config: limits,
    });
  }, 60_000);
  afterAll(() => backend?.close());

  it("requests with different X-Forwarded-For share one bucket", async () => {
    const statuses = [];
    // A bucket holds 30 (rate-limit.test.ts): the 31st address is refused all the same.
    for (let i = 1; i <= 31; i++) {
      const address = `10.1.0.${i}`;
      const { url, init } = recover(backend.url, address);
      const response = await fetch(url, init);
      statuses.push(response.status);
      if (response.status === 429) expect(await response.json()).toEqual(overRequestLimit);
    }
    expect(statuses).toEqual([...Array(30).fill(200), 429]);
  });

  it("the audit log records the socket's address, not the header", async () => {
    const email = randomEmail("audited");
    const created = await fetch(`${backend.url}/auth/v1/admin/users`, {
      method: "POST",
      headers: { apikey: SECRET_KEY, "Content-Type": "application/json" },
      body: JSON.stringify({ email, password: PASSWORD, email_confirm: true }),
    });
    const { id } = (await created.json()) as { id: string };
    const signIn = await fetch(`${backend.url}/auth/v1/token?grant_type=password`, {
      method: "POST",
      headers: {
        apikey: PUBLISHABLE_KEY,
        "Content-Type": "application/json",
        "X-Forwarded-For": "203.0.113.99",
      },
      body: JSON.stringify({ email, password: PASSWORD }),
    });
    expect(signIn.status).toBe(200);
    const { rows } = await backend.db.query<{ ip_address: string }>(
      `select ip_address from auth.audit_log_entries
       where payload->>'actor_id' = $1 and payload->>'action' = 'login'`,
      [id],
    );
    expect(rows.map((r) => r.ip_address)).toEqual(["127.0.0.1"]);
  });
});

describe("in process (no socket)", () => {
  let local: MemoryBackend;
  beforeAll(async () => {
    local = await memoryBackend(limits);
  }, 60_000);
  afterAll(() => local?.close());

  it("every caller is this machine: X-Forwarded-For does not make a new bucket", async () => {
    const statuses = [];
    for (let i = 1; i <= 31; i++) {
      const { url, init } = recover(local.backend.url, `10.2.0.${i}`);
      statuses.push((await local.fetch(url, init)).status);
    }
    expect(statuses).toEqual([...Array(30).fill(200), 429]);
    // rate-limit.test.ts: a backend told to trust X-Forwarded-For counts each address apart
  });
});

/**
 * Sb-Forwarded-For (supabase/auth internal/sbff, behind the hosted gateway): a server holding the
 * secret key names the visitor's address, and Auth counts that address instead of the server's,
 * in rate limits, the audit log and the MFA challenge's address check. Only while local-backend.toml
 * turns it on, and only with the secret key from a server.
 */
describe("Sb-Forwarded-For", () => {
  const WORKER = "edge-notes-worker/1.0";
  const CHROME =
    "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/140.0.0.0 Safari/537.36";
  let on: MemoryBackend;
  let off: MemoryBackend;
  beforeAll(async () => {
    // sign-ins (token_refresh) from 127.0.0.1 are many here; recover (sign_in_sign_ups) is small
    const rateLimit = { signInSignUps: 2, tokenRefresh: 1000, emailSent: 100 };
    [on, off] = await Promise.all([
      memoryBackend({ auth: { rateLimit }, local: { sbForwardedFor: true } }),
      // as a project whose local-backend.toml leaves it out (the repository's turns it on)
      memoryBackend({ auth: { rateLimit }, local: { sbForwardedFor: false } }),
    ]);
  }, 60_000);
  afterAll(async () => {
    await on?.close();
    await off?.close();
  });

  /** A password sign-in as the Worker makes it; the address its `login` entry records. */
  async function loginAddress(
    local: MemoryBackend,
    headers: Record<string, string>,
  ): Promise<string | undefined> {
    const email = randomEmail("forwarded");
    const created = await local.admin().auth.admin.createUser({
      email,
      password: PASSWORD,
      email_confirm: true,
    });
    if (created.error) throw created.error;
    const signIn = await local.fetch(`${local.backend.url}/auth/v1/token?grant_type=password`, {
      method: "POST",
      headers: { "Content-Type": "application/json", "User-Agent": WORKER, ...headers },
      body: JSON.stringify({ email, password: PASSWORD }),
    });
    expect(signIn.status).toBe(200);
    const { rows } = await local.backend.db.query<{ ip_address: string }>(
      `select ip_address from auth.audit_log_entries
       where payload->>'actor_id' = $1 and payload->>'action' = 'login'`,
      [created.data.user.id],
    );
    return rows[0]?.ip_address;
  }

  it("with the secret key from a server: the leftmost value, if it is an IP address", async () => {
    const cases: Array<[string, string]> = [
      ["203.0.113.7", "203.0.113.7"],
      ["203.0.113.8, 10.0.0.1, 10.0.0.2", "203.0.113.8"],
      ["  198.51.100.4  ,10.0.0.1", "198.51.100.4"],
      // Go's net.ParseIP(...).String(): canonical IPv6, an IPv4-mapped address as IPv4
      ["2001:DB8:0:0:0:0:0:1", "2001:db8::1"],
      ["::ffff:203.0.113.9", "203.0.113.9"],
      // not an address (a port, brackets, a zone, a name, leading zeros): the request's own
      ["203.0.113.7:443", "127.0.0.1"],
      ["[2001:db8::1]", "127.0.0.1"],
      ["fe80::1%eth0", "127.0.0.1"],
      ["visitor.example", "127.0.0.1"],
      ["010.0.0.1", "127.0.0.1"],
      [", 203.0.113.7", "127.0.0.1"],
      ["", "127.0.0.1"],
    ];
    for (const [header, expected] of cases) {
      const address = await loginAddress(on, { apikey: SECRET_KEY, "Sb-Forwarded-For": header });
      expect(address, header).toBe(expected);
    }
  });

  it("is ignored with any other key, and with the secret key from a browser", async () => {
    const header = { "Sb-Forwarded-For": "203.0.113.50" };
    for (const key of [PUBLISHABLE_KEY, ANON_KEY, SERVICE_ROLE_KEY]) {
      expect(await loginAddress(on, { apikey: key, ...header })).toBe("127.0.0.1");
    }
    // the secret key as the bearer while apikey is the publishable key: the apikey decides
    expect(
      await loginAddress(on, {
        apikey: PUBLISHABLE_KEY,
        Authorization: `Bearer ${SECRET_KEY}`,
        ...header,
      }),
    ).toBe("127.0.0.1");
    // the secret key from a browser is refused outright (secret-key.test.ts)
    const refused = await on.fetch(`${on.backend.url}/auth/v1/token?grant_type=password`, {
      method: "POST",
      headers: {
        apikey: SECRET_KEY,
        "User-Agent": CHROME,
        "Content-Type": "application/json",
        ...header,
      },
      body: JSON.stringify({ email: randomEmail(), password: PASSWORD }),
    });
    expect(refused.status).toBe(401);
  });

  it("is ignored while the switch is off (the default, as on a new hosted project)", async () => {
    expect(
      await loginAddress(off, { apikey: SECRET_KEY, "Sb-Forwarded-For": "203.0.113.60" }),
    ).toBe("127.0.0.1");
  });

  it("rate limits count each visitor the Worker forwards apart", async () => {
    const worker = (address: string) =>
      recoverWith(on, { apikey: SECRET_KEY, "User-Agent": WORKER, "Sb-Forwarded-For": address });
    // one visitor spends their bucket...
    let status = 0;
    for (let i = 0; i < 40 && status !== 429; i++) status = (await worker("198.51.100.77")).status;
    expect(status).toBe(429);
    // ...and another visitor, through the same Worker, is not refused
    expect((await worker("198.51.100.78")).status).toBe(200);
    // while the Worker's own address (no header) keeps its own bucket too
    expect((await recoverWith(on, { apikey: SECRET_KEY, "User-Agent": WORKER })).status).toBe(200);
  });

  it("the MFA challenge's address check compares the forwarded addresses", async () => {
    const { session } = await on.signedIn();
    const asUser = (address: string) => ({
      apikey: SECRET_KEY,
      Authorization: `Bearer ${session.access_token}`,
      "User-Agent": WORKER,
      "Content-Type": "application/json",
      "Sb-Forwarded-For": address,
    });
    const enrolled = await on.fetch(`${on.backend.url}/auth/v1/factors`, {
      method: "POST",
      headers: asUser("203.0.113.20"),
      body: JSON.stringify({ factor_type: "totp" }),
    });
    expect(enrolled.status).toBe(200);
    const { id } = (await enrolled.json()) as { id: string };
    const challenged = await on.fetch(`${on.backend.url}/auth/v1/factors/${id}/challenge`, {
      method: "POST",
      headers: asUser("203.0.113.20"),
      body: "{}",
    });
    expect(challenged.status).toBe(200);
    const challenge = (await challenged.json()) as { id: string };
    const verified = await on.fetch(`${on.backend.url}/auth/v1/factors/${id}/verify`, {
      method: "POST",
      headers: asUser("203.0.113.21"),
      body: JSON.stringify({ challenge_id: challenge.id, code: "000000" }),
    });
    expect(verified.status).toBe(422);
    expect(await verified.json()).toMatchObject({ error_code: "mfa_ip_address_mismatch" });
  });
});

function recoverWith(local: MemoryBackend, headers: Record<string, string>) {
  return local.fetch(`${local.backend.url}/auth/v1/recover`, {
    method: "POST",
    headers: { "Content-Type": "application/json", ...headers },
    body: JSON.stringify({ email: randomEmail("nobody") }),
  });
}

describe("the address travels with the request the gateway saw", () => {
  it("a Request the gateway never saw has no address: reading it throws, never 127.0.0.1", () => {
    // (a copy made after the gateway, say: it must not quietly share one bucket with every caller)
    const copy = new Request("http://127.0.0.1:54321/auth/v1/token?grant_type=password");
    expect(() => clientIp(copy)).toThrow(/did not pass the gateway/);
  });
});
