// The password grant must not tell by its answer time whether an address has an account: an
// unknown address (or an account without a password) is checked against a bcrypt hash of the same
// cost as a real one, so all three take about one bcrypt comparison. Medians of a few interleaved
// tries on a second, in-memory backend; the band is wide (other test files share the CPU), while
// skipping the comparison makes the unknown address about 25 times faster. Then the hashes
// auth.users holds: GoTrue's format and cost, or the lower cost a test backend asks for.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PASSWORD, randomEmail } from "../../../../tests/support/backend.ts";
import { type MemoryBackend, memoryBackend } from "../../../../tests/support/memory-backend.ts";

let local: MemoryBackend;

beforeAll(async () => {
  // The real cost (the test backends hash at bcrypt's minimum, where one comparison is ~1 ms).
  local = await memoryBackend({ auth: { passwordHashCost: 10 } });
}, 60_000);
afterAll(() => local?.close());

const TRIES = 5;

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)] as number;
}

describe("POST /token?grant_type=password timing", () => {
  it("an unknown address and an account without a password take about as long as a wrong password", async () => {
    const known = randomEmail("timing");
    const passwordless = randomEmail("timing-oauth");
    const admin = local.admin();
    const created = await Promise.all([
      admin.auth.admin.createUser({ email: known, password: PASSWORD, email_confirm: true }),
      admin.auth.admin.createUser({ email: passwordless, email_confirm: true }),
    ]);
    for (const { error } of created) expect(error).toBeNull();

    const client = local.client();
    const attempt = async (email: string) => {
      const started = performance.now();
      const { error } = await client.auth.signInWithPassword({ email, password: "not-it-42" });
      const elapsed = performance.now() - started;
      // The same answer for all three.
      expect(error).toMatchObject({
        status: 400,
        code: "invalid_credentials",
        message: "Invalid login credentials",
      });
      return elapsed;
    };

    const times = { known: [] as number[], unknown: [] as number[], passwordless: [] as number[] };
    // One warm-up each, then interleaved so that any load on the machine hits all three alike.
    await attempt(known);
    await attempt(randomEmail("nobody"));
    await attempt(passwordless);
    for (let i = 0; i < TRIES; i++) {
      times.known.push(await attempt(known));
      times.unknown.push(await attempt(randomEmail("nobody")));
      times.passwordless.push(await attempt(passwordless));
    }
    const baseline = median(times.known);
    const ratios = {
      unknown: median(times.unknown) / baseline,
      passwordless: median(times.passwordless) / baseline,
    };
    expect(ratios.unknown, JSON.stringify(times)).toBeGreaterThan(0.5);
    expect(ratios.unknown, JSON.stringify(times)).toBeLessThan(2);
    expect(ratios.passwordless, JSON.stringify(times)).toBeGreaterThan(0.5);
    expect(ratios.passwordless, JSON.stringify(times)).toBeLessThan(2);
  });
});

describe("stored password hashes", () => {
  async function storedHash(backend: MemoryBackend): Promise<string | undefined> {
    const email = randomEmail("hash");
    const { error } = await backend.client().auth.signUp({ email, password: PASSWORD });
    expect(error).toBeNull();
    const { rows } = await backend.backend.db.query<{ hash: string }>(
      "select encrypted_password as hash from auth.users where email = $1",
      [email],
    );
    return rows[0]?.hash;
  }

  it("are what GoTrue stores: bcrypt $2a$, cost 10", async () => {
    expect(await storedHash(local)).toMatch(/^\$2a\$10\$[./A-Za-z0-9]{53}$/);
  });

  it("take the cost a test backend asks for, and still sign in", async () => {
    const quick = await memoryBackend({ auth: { passwordHashCost: 4 } });
    try {
      expect(await storedHash(quick)).toMatch(/^\$2a\$04\$[./A-Za-z0-9]{53}$/);
      const { session } = await quick.signedIn();
      expect(session?.access_token).toBeTruthy();
    } finally {
      await quick.close();
    }
  }, 60_000);
});
