import { createHash, randomUUID } from "node:crypto";
import { authError } from "../errors.ts";
import { type Db, one, run } from "./db.ts";

/** Flow states live 5 minutes, as the real service's FlowStateExpiryDuration. */
const FLOW_STATE_TTL_SECONDS = 300;

/** The PKCE parameters a request carries (both or neither; see pkceRequested). */
export interface PkceParams {
  code_challenge?: string;
  code_challenge_method?: string;
}

export async function createFlowState(
  db: Db,
  params: PkceParams,
  authenticationMethod: string,
  userId: string | null,
  providerType = "email",
): Promise<string> {
  return (await insertFlowState(db, params, authenticationMethod, userId, providerType)).authCode;
}

/** A new flow state row: its id (the OAuth flows carry it in `state`) and its auth code. */
export async function insertFlowState(
  db: Db,
  params: PkceParams,
  authenticationMethod: string,
  userId: string | null,
  providerType: string,
): Promise<{ id: string; authCode: string }> {
  const id = randomUUID();
  const authCode = randomUUID();
  await run(
    db,
    `insert into auth.flow_state (id, user_id, auth_code, code_challenge_method, code_challenge,
       provider_type, created_at, updated_at, authentication_method)
     values ($1, $2, $3, $4, $5, $6, now(), now(), $7)`,
    [
      id,
      userId,
      authCode,
      (params.code_challenge_method ?? "").toLowerCase(),
      params.code_challenge,
      providerType,
      authenticationMethod,
    ],
  );
  return { id, authCode };
}

/** issueAuthCode: the newest flow state of the user for that method gets its code issued. */
export async function issueAuthCode(
  db: Db,
  userId: string,
  authenticationMethod: string,
): Promise<string> {
  const row = await one<{ id: string; auth_code: string }>(
    db,
    `select id, auth_code from auth.flow_state where user_id = $1 and authentication_method = $2
     order by created_at desc limit 1`,
    [userId, authenticationMethod],
  );
  if (!row)
    throw authError("flowStateNotFound", "No associated flow state found. flow state not found");
  await run(
    db,
    "update auth.flow_state set auth_code_issued_at = now(), updated_at = now() where id = $1",
    [row.id],
  );
  return row.auth_code;
}

/** The pkce grant: checks the verifier against the stored challenge and consumes the flow state. */
export async function consumeFlowState(
  db: Db,
  authCode: string,
  verifier: string,
): Promise<{
  userId: string;
  authenticationMethod: string;
  providerType: string;
  providerAccessToken: string | null;
  providerRefreshToken: string | null;
}> {
  const row = await one<{
    id: string;
    user_id: string | null;
    provider_type: string;
    provider_access_token: string | null;
    provider_refresh_token: string | null;
    code_challenge: string;
    code_challenge_method: string;
    authentication_method: string;
    expired: boolean;
  }>(
    db,
    `select *, now() > coalesce(auth_code_issued_at, created_at) + make_interval(secs => $2) as expired
     from auth.flow_state where auth_code = $1`,
    [authCode, FLOW_STATE_TTL_SECONDS],
  );
  if (!row || !row.user_id) throw authError("flowStateNotFound");
  if (row.expired) throw authError("flowStateExpired");
  const computed =
    row.code_challenge_method === "s256"
      ? createHash("sha256").update(verifier).digest("base64url")
      : verifier;
  if (computed !== row.code_challenge) throw authError("badCodeVerifier");
  await run(db, "delete from auth.flow_state where id = $1", [row.id]);
  return {
    userId: row.user_id,
    authenticationMethod: row.authentication_method,
    providerType: row.provider_type,
    providerAccessToken: row.provider_access_token,
    providerRefreshToken: row.provider_refresh_token,
  };
}

/** An OAuth flow's state remembers where to go back to and, for linking, whose identity it adds. */
export async function setOAuthFlowDetails(
  db: Db,
  id: string,
  referrer: string,
  linkingTargetId: string | null,
): Promise<void> {
  await run(db, "update auth.flow_state set referrer = $2, linking_target_id = $3 where id = $1", [
    id,
    referrer,
    linkingTargetId,
  ]);
}

export async function findFlowStateById(
  db: Db,
  id: string,
): Promise<{ id: string; auth_code: string; user_id: string | null } | undefined> {
  return one(db, "select id, auth_code, user_id from auth.flow_state where id = $1", [id]);
}

/** The provider answered: the flow state belongs to the user now and its code is issued. */
export async function completeOAuthFlow(
  db: Db,
  id: string,
  userId: string,
  providerAccessToken: string,
): Promise<void> {
  await run(
    db,
    `update auth.flow_state set user_id = $2, auth_code_issued_at = now(), updated_at = now(),
       provider_access_token = $3 where id = $1`,
    [id, userId, providerAccessToken],
  );
}
