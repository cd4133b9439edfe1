// The address rate limits and the audit log count is the socket's: X-Forwarded-For is written by
// whoever sends the request, so a default backend ignores it and one client cannot get a fresh
// bucket per request by inventing addresses. Only a backend told to trust a proxy header reads it.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  PASSWORD,
  PUBLISHABLE_KEY,
  randomEmail,
  SECRET_KEY,
} from "../../../tests/support/backend.ts";
import {
  type MemoryBackend,
  memoryBackend,
  workerDatabase,
} from "../../../tests/support/memory-backend.ts";
import { createLocalBackend, type LocalBackend } from "../src/server.ts";

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
    for (const address of ["10.1.0.1", "10.1.0.2", "10.1.0.3"]) {
      const { url, init } = recover(backend.url, address);
      const response = await fetch(url, init);
      statuses.push(response.status);
      if (response.status === 429) expect(await response.json()).toEqual(overRequestLimit);
    }
    expect(statuses).toEqual([200, 200, 429]);
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
    for (const address of ["10.2.0.1", "10.2.0.2", "10.2.0.3"]) {
      const { url, init } = recover(local.backend.url, address);
      statuses.push((await local.fetch(url, init)).status);
    }
    expect(statuses).toEqual([200, 200, 429]);
    // rate-limit.test.ts: a backend told to trust X-Forwarded-For counts each address apart
  });
});
