// Two backends of one project with different settings serving one database (the `db` option, what
// the test helpers use to spare a database per settings variant): each answers by its own
// settings, both see the same rows, and closing the one that borrowed the database leaves it open.
import { createClient } from "@supabase/supabase-js";
import { afterAll, beforeAll, expect, it } from "vitest";
import {
  PASSWORD,
  PUBLISHABLE_KEY,
  QUICK_PASSWORD_HASH_COST,
  randomEmail,
  SECRET_KEY,
} from "../../../tests/support/backend.ts";
import { createLocalBackend, type LocalBackend } from "../src/backend.ts";

let owner: LocalBackend;
let borrower: LocalBackend;
const quick = { passwordHashCost: QUICK_PASSWORD_HASH_COST };

beforeAll(async () => {
  owner = await createLocalBackend({ host: false, seed: false, config: { auth: quick } });
  borrower = await createLocalBackend({
    host: false,
    db: owner.db,
    config: { auth: { ...quick, enableSignup: false } },
  });
}, 60_000);
afterAll(async () => {
  await borrower?.close();
  await owner?.close();
});

const client = (backend: LocalBackend, key = PUBLISHABLE_KEY) =>
  createClient(backend.url, key, {
    auth: { persistSession: false, autoRefreshToken: false },
    global: { fetch: (input, init) => backend.fetch(new Request(input, init)) },
  });

it("each backend answers by its own settings; both see the same users", async () => {
  const email = randomEmail("shared");
  const signedUp = await client(owner).auth.signUp({ email, password: PASSWORD });
  expect(signedUp.error).toBeNull();

  const refused = await client(borrower).auth.signUp({ email: randomEmail(), password: PASSWORD });
  expect(refused.error).toMatchObject({ status: 422, code: "signup_disabled" });

  const { data } = await client(borrower, SECRET_KEY).auth.admin.listUsers({ perPage: 1000 });
  expect(data.users.map((user) => user.email)).toContain(email);
});

it("closing the backend that borrowed the database leaves it open for its owner", async () => {
  const other = await createLocalBackend({ host: false, db: owner.db, config: { auth: quick } });
  await other.close();
  const { rows } = await owner.db.query<{ n: number }>("select 1 as n");
  expect(rows).toEqual([{ n: 1 }]);
  const email = randomEmail("after");
  const { error } = await client(owner).auth.signUp({ email, password: PASSWORD });
  expect(error).toBeNull();
});
