// Auth hooks ([auth.hook.*] in config.toml) that are Postgres functions, through the real
// supabase-js: each runs as Auth's database user, supabase_auth_admin, with what a migration
// grants that role, as on a hosted project. HTTP hooks: hooks-http.test.ts.
import { decodeJwt } from "jose";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { PASSWORD, PUBLISHABLE_KEY, randomEmail } from "../../../../tests/support/backend.ts";
import { type MemoryBackend, memoryBackend } from "../../../../tests/support/memory-backend.ts";
import { otherCode, totpCode } from "../../../../tests/support/mfa.ts";

/** The hook functions, in a schema of this file's own (the worker's database is shared). What
 * each does depends on the address or the user, so that each test picks its case. */
const HOOKS_SQL = `
create schema if not exists hooks_test;
grant usage on schema hooks_test to supabase_auth_admin;
create table if not exists hooks_test.events (
  id bigserial primary key, hook text not null, payload jsonb not null);
grant select, insert on hooks_test.events to supabase_auth_admin;
grant usage on sequence hooks_test.events_id_seq to supabase_auth_admin;
create table if not exists hooks_test.roles (user_id uuid primary key, role text not null);
alter table hooks_test.roles enable row level security;
grant select on hooks_test.roles to supabase_auth_admin;
drop policy if exists "auth reads roles" on hooks_test.roles;
create policy "auth reads roles" on hooks_test.roles for select to supabase_auth_admin using (true);
-- no grant to supabase_auth_admin: a hook that reads it fails, as on a hosted project
create table if not exists hooks_test.not_granted (secret text);

create or replace function hooks_test.access_token(event jsonb) returns jsonb
language plpgsql as $$
declare
  claims jsonb := event->'claims';
  email text := event->'claims'->>'email';
  found_role text;
begin
  insert into hooks_test.events (hook, payload) values ('access_token', event);
  if email like 'reads-not-granted-%' then
    perform * from hooks_test.not_granted;
  elsif email like 'bad-claims-%' then
    return jsonb_build_object('claims', (claims - 'aud') || '{"exp": "soon"}');
  elsif email like 'endless-%' then
    loop perform 1; end loop;
  elsif email like 'no-claims-%' then
    return '{}';
  elsif email like 'refused-%' then
    return '{"error": {"http_code": 403, "message": "No tokens for you"}}';
  elsif email like 'odd-status-%' then
    return '{"error": {"http_code": 999, "message": "No such status"}}';
  end if;
  select role into found_role from hooks_test.roles where user_id = (event->>'user_id')::uuid;
  return jsonb_build_object('claims',
    claims || jsonb_build_object('user_role', coalesce(found_role, 'member'), 'whoami', current_user,
      'search_path', current_setting('search_path')));
end $$;

create or replace function hooks_test.password_attempt(event jsonb) returns jsonb
language plpgsql as $$
declare failures int;
begin
  insert into hooks_test.events (hook, payload) values ('password', event);
  select count(*) into failures from hooks_test.events e
    where e.hook = 'password' and e.payload->>'user_id' = event->>'user_id'
      and not (e.payload->>'valid')::boolean;
  if failures >= 2 then
    return jsonb_build_object('decision', 'reject', 'message', 'Locked after 2 wrong passwords',
      'should_logout_user', true);
  end if;
  return '{"decision": "continue"}';
end $$;

create or replace function hooks_test.mfa_attempt(event jsonb) returns jsonb
language plpgsql as $$
begin
  insert into hooks_test.events (hook, payload) values ('mfa', event);
  if not (event->>'valid')::boolean then return '{"decision": "reject"}'; end if;
  return '{"decision": "continue"}';
end $$;

create or replace function hooks_test.before_user_created(event jsonb) returns jsonb
language plpgsql as $$
begin
  insert into hooks_test.events (hook, payload) values ('before_user_created', event);
  if event->'user'->>'email' like '%@blocked.example.com' then
    return '{"error": {"http_code": 403, "message": "Sign-ups from blocked.example.com are closed"}}';
  end if;
  return '{}';
end $$;

create or replace function hooks_test.send_email(event jsonb) returns jsonb
language plpgsql as $$
begin
  insert into hooks_test.events (hook, payload) values ('send_email', event);
  return '{}';
end $$;
`;

const uri = (name: string) => `pg-functions://postgres/hooks_test/${name}`;

let local: MemoryBackend;

beforeAll(async () => {
  local = await memoryBackend({
    auth: {
      email: {
        enableConfirmations: true,
        doubleConfirmChanges: true,
        notifications: { email_changed: { enabled: true } },
      },
      enableAnonymousSignIns: true,
      hooks: {
        custom_access_token: { uri: uri("access_token"), secrets: [] },
        password_verification_attempt: { uri: uri("password_attempt"), secrets: [] },
        mfa_verification_attempt: { uri: uri("mfa_attempt"), secrets: [] },
        before_user_created: { uri: uri("before_user_created"), secrets: [] },
        send_email: { uri: uri("send_email"), secrets: [] },
      },
    },
  });
  await local.backend.db.exec(HOOKS_SQL);
}, 60_000);
afterAll(async () => {
  await local?.close();
});

/** What the hook functions were sent for a user, oldest first. */
async function events(hook: string, userId: string): Promise<Record<string, any>[]> {
  const { rows } = await local.backend.db.query<{ payload: Record<string, unknown> }>(
    `select payload from hooks_test.events
     where hook = $1 and coalesce(payload->>'user_id', payload->'user'->>'id') = $2 order by id`,
    [hook, userId],
  );
  return rows.map((row) => row.payload);
}

/** A confirmed user made by the admin API (which no hook sees) and a client of it. */
async function user(prefix: string) {
  const email = randomEmail(prefix);
  const created = await local.admin().auth.admin.createUser({
    email,
    password: PASSWORD,
    email_confirm: true,
  });
  if (created.error) throw created.error;
  return { email, id: created.data.user.id, client: local.client() };
}

/** A password sign-in straight to /token, for the status and body supabase-js would hide. */
async function passwordGrant(email: string, password: string) {
  const response = await local.fetch(`${local.backend.url}/auth/v1/token?grant_type=password`, {
    method: "POST",
    headers: { apikey: PUBLISHABLE_KEY, "Content-Type": "application/json" },
    body: JSON.stringify({ email, password }),
  });
  return { status: response.status, headers: response.headers, body: await response.json() };
}

describe("the custom access token hook", () => {
  it("signs the claims the function returns, for a sign-in and a refresh, and tells it how the session was authenticated", async () => {
    const { email, id, client } = await user("claims");
    await local.backend.db.query("insert into hooks_test.roles values ($1, 'editor')", [id]);
    const signedIn = await client.auth.signInWithPassword({ email, password: PASSWORD });
    if (signedIn.error) throw signedIn.error;
    const claims = decodeJwt(signedIn.data.session.access_token);
    expect(claims).toMatchObject({
      sub: id,
      email,
      role: "authenticated",
      aal: "aal1",
      user_role: "editor",
      // Auth's database user, with its search path, not the superuser the backend works as
      whoami: "supabase_auth_admin",
      search_path: "auth",
    });
    const refreshed = await client.auth.refreshSession();
    if (refreshed.error) throw refreshed.error;
    expect(decodeJwt(refreshed.data.session?.access_token ?? "").user_role).toBe("editor");

    const sent = await events("access_token", id);
    expect(sent.map((e) => e.authentication_method)).toEqual(["password", "token_refresh"]);
    const first = sent[0] as { metadata: Record<string, unknown>; claims: Record<string, unknown> };
    expect(first.metadata).toMatchObject({
      name: "customize-access-token",
      ip_address: "127.0.0.1",
    });
    expect(first.metadata.uuid).toMatch(/^[0-9a-f-]{36}$/);
    // the claims Auth would have signed: no user_role yet, is_anonymous and the session's id
    expect(first.claims).toMatchObject({ sub: id, aud: "authenticated", is_anonymous: false });
    expect(first.claims).not.toHaveProperty("user_role");
    expect(first.claims.session_id).toBe(claims.session_id);
  });

  it("gives an anonymous sign-in its hook too", async () => {
    const client = local.client();
    const { data, error } = await client.auth.signInAnonymously();
    if (error) throw error;
    expect(decodeJwt(data.session?.access_token ?? "")).toMatchObject({
      is_anonymous: true,
      user_role: "member",
    });
    const sent = await events("access_token", data.user?.id ?? "");
    expect(sent.map((e) => e.authentication_method)).toEqual(["anonymous"]);
  });

  it("refuses the sign-in when the function fails, returns claims Auth's schema refuses, or returns none", async () => {
    // the cause is the developer's to read in the backend's log, not the caller's
    const logged = vi.spyOn(console, "warn").mockImplementation(() => {});
    const notGranted = await user("reads-not-granted");
    expect(await passwordGrant(notGranted.email, PASSWORD)).toMatchObject({
      status: 500,
      body: {
        code: 500,
        error_code: "unexpected_failure",
        msg: `Error running hook URI: ${uri("access_token")}`,
      },
    });
    const badClaims = await user("bad-claims");
    const bad = await passwordGrant(badClaims.email, PASSWORD);
    expect(bad.status).toBe(500);
    expect(bad.body.msg).toBe(
      "output claims do not conform to the expected schema: \n- (root): aud is required\n- exp: Invalid type. Expected: integer, given: string\n",
    );
    expect(bad.headers.get("x-sb-error-code")).toBeNull();
    const noClaims = await user("no-claims");
    expect((await passwordGrant(noClaims.email, PASSWORD)).body).toMatchObject({
      code: 500,
      error_code: "unexpected_failure",
      msg: "output claims field is missing",
    });
    const refused = await user("refused");
    expect(await passwordGrant(refused.email, PASSWORD)).toMatchObject({
      status: 403,
      body: { code: 403, error_code: "unknown", msg: "No tokens for you" },
    });
    // a status no HTTP answer can carry is a 500 with the hook's message
    const oddStatus = await user("odd-status");
    expect(await passwordGrant(oddStatus.email, PASSWORD)).toMatchObject({
      status: 500,
      body: { code: 500, error_code: "unexpected_failure", msg: "No such status" },
    });
    // a function that never ends is stopped after 2 s; the sign-in fails and the backend goes on
    const endless = await user("endless");
    const started = Date.now();
    expect((await passwordGrant(endless.email, PASSWORD)).body).toMatchObject({
      code: 500,
      msg: `Error running hook URI: ${uri("access_token")}`,
    });
    expect(Date.now() - started).toBeGreaterThanOrEqual(2000);
    expect((await passwordGrant(refused.email, PASSWORD)).status).toBe(403);
    expect(logged.mock.calls.map(([line]) => line)).toEqual([
      `[local auth] hook ${uri("access_token")} failed: permission denied for table not_granted`,
      `[local auth] hook ${uri("access_token")} failed: canceling statement due to statement timeout`,
    ]);
    logged.mockRestore();
    // nothing was half done: no session was left behind by the failed sign-ins
    const { rows } = await local.backend.db.query(
      "select 1 from auth.sessions where user_id = any($1::uuid[])",
      [[notGranted.id, badClaims.id, noClaims.id, refused.id, oddStatus.id, endless.id]],
    );
    expect(rows).toEqual([]);
  });
});

describe("the password verification attempt hook", () => {
  it("is told each attempt, and its reject refuses even the right password and signs the user out", async () => {
    const { email, id, client } = await user("locked");
    const first = await client.auth.signInWithPassword({ email, password: PASSWORD });
    if (first.error) throw first.error;

    for (let attempt = 0; attempt < 2; attempt++) {
      const wrong = await passwordGrant(email, "not-the-password");
      expect(wrong.status).toBe(400);
      // the first wrong one is Auth's own answer, the second the hook's refusal
      expect(wrong.body.msg).toBe(
        attempt === 0 ? "Invalid login credentials" : "Locked after 2 wrong passwords",
      );
    }
    expect(await passwordGrant(email, PASSWORD)).toMatchObject({
      status: 400,
      body: { error_code: "invalid_credentials", msg: "Locked after 2 wrong passwords" },
    });
    expect((await events("password", id)).map((e) => e.valid)).toEqual([true, false, false, true]);
    // should_logout_user: the session from before is gone
    const refreshed = await client.auth.refreshSession();
    expect(refreshed.error?.code).toBe("refresh_token_not_found");
  });
});

describe("the MFA verification attempt hook", () => {
  it("is told whether the code was right, and its reject is a 403 that signs the user out everywhere", async () => {
    const { email, id, client } = await user("mfa");
    const signedIn = await client.auth.signInWithPassword({ email, password: PASSWORD });
    if (signedIn.error) throw signedIn.error;
    const enrolled = await client.auth.mfa.enroll({ factorType: "totp" });
    if (enrolled.error) throw enrolled.error;
    const factorId = enrolled.data.id;
    const secret = enrolled.data.totp.secret;
    const right = await client.auth.mfa.challengeAndVerify({ factorId, code: totpCode(secret) });
    if (right.error) throw right.error;
    expect(decodeJwt(right.data.access_token)).toMatchObject({ aal: "aal2", user_role: "member" });

    const challenge = await client.auth.mfa.challenge({ factorId });
    if (challenge.error) throw challenge.error;
    const wrong = await client.auth.mfa.verify({
      factorId,
      challengeId: challenge.data.id,
      code: otherCode(totpCode(secret)),
    });
    expect(wrong.error).toMatchObject({
      status: 403,
      code: "mfa_verification_rejected",
      message: "Further MFA verification attempts will be rejected.",
    });
    const sent = await events("mfa", id);
    expect(sent.map((e) => [e.factor_id, e.factor_type, e.valid])).toEqual([
      [factorId, "totp", true],
      [factorId, "totp", false],
    ]);
    const { rows } = await local.backend.db.query(
      "select 1 from auth.sessions where user_id = $1",
      [id],
    );
    expect(rows).toEqual([]);
    // the access token raised to aal2 said how: the factor
    expect((await events("access_token", id)).map((e) => e.authentication_method)).toEqual([
      "password",
      "totp",
    ]);
  });
});

describe("the before user created hook", () => {
  it("sees the user a sign-up is about to create, with the id it is then created with", async () => {
    const email = randomEmail("welcome");
    const { data, error } = await local
      .client()
      .auth.signUp({ email, password: PASSWORD, options: { data: { name: "Ada" } } });
    if (error) throw error;
    const id = data.user?.id ?? "";
    const [event] = await events("before_user_created", id);
    expect(event).toMatchObject({
      metadata: { name: "before-user-created", ip_address: "127.0.0.1" },
      user: {
        id,
        aud: "authenticated",
        email,
        phone: "",
        app_metadata: { provider: "email", providers: ["email"] },
        user_metadata: { name: "Ada" },
        identities: [],
        is_anonymous: false,
      },
    });
  });

  it("refuses a sign-up, a one-time code to a new address and an invite with the hook's error; the admin API is not asked", async () => {
    const blocked = () => `${crypto.randomUUID().slice(0, 8)}@blocked.example.com`;
    const refusal = {
      status: 403,
      code: "unknown",
      message: "Sign-ups from blocked.example.com are closed",
    };
    const signUp = await local.client().auth.signUp({ email: blocked(), password: PASSWORD });
    expect(signUp.error).toMatchObject(refusal);
    const otp = await local.client().auth.signInWithOtp({ email: blocked() });
    expect(otp.error).toMatchObject(refusal);
    const invite = await local.admin().auth.admin.inviteUserByEmail(blocked());
    expect(invite.error).toMatchObject(refusal);
    const { rows } = await local.backend.db.query(
      "select 1 from auth.users where email like '%@blocked.example.com'",
    );
    expect(rows).toEqual([]);
    const created = await local.admin().auth.admin.createUser({ email: blocked() });
    expect(created.error).toBeNull();
  });
});

describe("the send email hook", () => {
  it("takes an email change's two codes in one call, with Auth's pairing, and the notification the change sends from inside its transaction", async () => {
    const { email, id, client } = await user("moving");
    const signedIn = await client.auth.signInWithPassword({ email, password: PASSWORD });
    if (signedIn.error) throw signedIn.error;
    const newEmail = randomEmail("moved");
    const changed = await client.auth.updateUser({ email: newEmail });
    if (changed.error) throw changed.error;
    expect(local.backend.inbox.list(email)).toEqual([]);
    expect(local.backend.inbox.list(newEmail)).toEqual([]);
    const [change] = await events("send_email", id);
    const data = change?.email_data;
    expect(data).toMatchObject({
      email_action_type: "email_change",
      token_hash_new: expect.any(String),
    });
    // token: the current address's code; token_new: the new one's (Auth's EmailData)
    for (const [address, token] of [
      [email, data.token],
      [newEmail, data.token_new],
    ]) {
      const verified = await client.auth.verifyOtp({ email: address, token, type: "email_change" });
      expect(verified.error).toBeNull();
    }
    const { data: after } = await local.admin().auth.admin.getUserById(id);
    expect(after.user?.email).toBe(newEmail);
    const sent = (await events("send_email", id)).map((e) => e.email_data);
    expect(sent.at(-1)).toMatchObject({
      email_action_type: "email_changed_notification",
      old_email: email,
      token: "",
    });
  });
});
