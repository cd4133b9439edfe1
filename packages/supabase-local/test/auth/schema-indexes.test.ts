// The auth schema's lookup indexes are the hosted schema's (as `supabase db dump` shows them), and
// the lookups the Auth API makes on every sign-in can use them. Without them each search by address,
// and each list of a user's identities, sessions or factors, reads the whole table: a project's
// users, and a test run's thousands, made sign-in slower the more there were.
import type { PGlite } from "@electric-sql/pglite";
import { beforeAll, describe, expect, test } from "vitest";
import { workerDatabase } from "../../../../tests/support/memory-backend.ts";
import { tokenHashLookup } from "../../src/auth/models/users.ts";

let db: PGlite;
beforeAll(async () => {
  db = await workerDatabase();
}, 60_000);

const HOSTED = {
  users: [
    "users_email_partial_key",
    "users_instance_id_email_idx",
    "users_instance_id_idx",
    "users_is_anonymous_idx",
    "confirmation_token_idx",
    "recovery_token_idx",
    "email_change_token_current_idx",
    "email_change_token_new_idx",
    "reauthentication_token_idx",
  ],
  one_time_tokens: [
    "one_time_tokens_token_hash_hash_idx",
    "one_time_tokens_relates_to_hash_idx",
    "one_time_tokens_user_id_token_type_key",
  ],
  identities: ["identities_email_idx", "identities_user_id_idx"],
  sessions: ["sessions_not_after_idx", "sessions_user_id_idx", "user_id_created_at_idx"],
  refresh_tokens: [
    "refresh_tokens_instance_id_idx",
    "refresh_tokens_instance_id_user_id_idx",
    "refresh_tokens_parent_idx",
    "refresh_tokens_session_id_revoked_idx",
    "refresh_tokens_updated_at_idx",
  ],
  mfa_factors: ["factor_id_created_at_idx", "mfa_factors_user_friendly_name_unique"],
  mfa_challenges: ["mfa_challenge_created_at_idx"],
  flow_state: ["flow_state_created_at_idx", "idx_auth_code", "idx_user_id_auth_method"],
  audit_log_entries: ["audit_logs_instance_id_idx"],
};

describe("the auth schema's indexes", () => {
  test("are the hosted schema's lookup indexes", async () => {
    const { rows } = await db.query<{ tablename: string; indexname: string }>(
      "select tablename, indexname from pg_indexes where schemaname = 'auth'",
    );
    for (const [table, indexes] of Object.entries(HOSTED)) {
      const present = rows.filter((r) => r.tablename === table).map((r) => r.indexname);
      expect(present, table).toEqual(expect.arrayContaining(indexes));
    }
  });

  /** The plan Postgres makes for `sql` when it may not read a whole table. */
  async function plan(sql: string, params: unknown[]): Promise<string> {
    return db.transaction(async (tx) => {
      await tx.exec("set local enable_seqscan = off");
      const { rows } = await tx.query<{ "QUERY PLAN": string }>(`explain ${sql}`, params);
      return rows.map((r) => r["QUERY PLAN"]).join("\n");
    });
  }

  test("serve the lookups every sign-in makes", async () => {
    const user = crypto.randomUUID();
    // by address, as the API asks: the nil instance, the address lower-cased, not an SSO user
    expect(
      await plan(
        `select * from auth.users where instance_id = '00000000-0000-0000-0000-000000000000'
           and lower(email) = lower($1) and is_sso_user = false`,
        ["Someone@Example.com"],
      ),
    ).toContain("users_instance_id_email_idx");
    expect(
      await plan("select * from auth.identities where user_id = $1 order by created_at", [user]),
    ).toContain("identities_user_id_idx");
    expect(await plan("select * from auth.sessions where user_id = $1", [user])).toMatch(
      /sessions_user_id_idx|user_id_created_at_idx/,
    );
    expect(
      await plan("select * from auth.mfa_factors where user_id = $1 order by created_at", [user]),
    ).toContain("factor_id_created_at_idx");
  });

  test("find an email link's user by the token's hash, in the columns of its kind", async () => {
    const hash = "4f1c".repeat(14);
    const kinds: Array<[Parameters<typeof tokenHashLookup>[0], string[]]> = [
      [["confirmation_token"], ["confirmation_token_idx"]],
      [["recovery_token"], ["recovery_token_idx"]],
      [
        ["confirmation_token", "recovery_token"],
        ["confirmation_token_idx", "recovery_token_idx"],
      ],
      [
        ["email_change_token_new", "email_change_token_current"],
        ["email_change_token_new_idx", "email_change_token_current_idx"],
      ],
    ];
    for (const [columns, indexes] of kinds) {
      const shown = await plan(tokenHashLookup(columns), [hash]);
      for (const index of indexes) expect(shown, columns.join()).toContain(index);
      expect(shown).not.toContain("Seq Scan");
    }
  });
});
