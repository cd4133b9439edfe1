import type { SupabaseClient } from "@supabase/supabase-js";

/**
 * Features not every Supabase project has, asked of the backend once and remembered for the
 * isolate's life, per backend URL: true (it has it), false (it has not), or null when the backend
 * could not tell right now. Pages offer a feature only on true: never a panel or a link that would
 * fail. Form posts are refused only on false: on null they go ahead, and the backend's own answer
 * is what the visitor sees.
 *
 * MFA recovery codes (auth-js `mfa.recoveryCodes`, experimental) are a preview of Supabase Auth:
 * hosted projects do not have them, and the local backend has them only when
 * supabase/local-backend.toml turns them on. The question is the status call itself (a user's
 * token is needed: every /factors route wants one):
 * - with them, `GET /factors/recovery-codes` answers the user's count, or 404
 *   `mfa_factor_not_found` for a user without codes;
 * - without them (hosted Auth v2.189.0, or the local backend with them off), "recovery-codes" is
 *   taken for the id of /factors/{factor_id}: 404 `validation_failed`, "factor_id must be an UUID".
 * Any other answer (the backend unreachable, a session that ended) decides nothing and is not
 * remembered: null, and the next request asks again.
 */
const recoveryCodes = new Map<string, boolean>();

export async function offersRecoveryCodes(
  supabase: SupabaseClient,
  backendUrl: string,
): Promise<boolean | null> {
  const known = recoveryCodes.get(backendUrl);
  if (known !== undefined) return known;
  const { data, error } = await supabase.auth.mfa.recoveryCodes.getStatus();
  const offered =
    data || error?.code === "mfa_factor_not_found"
      ? true
      : error?.status === 404 && error.code === "validation_failed"
        ? false
        : undefined;
  if (offered === undefined) return null;
  recoveryCodes.set(backendUrl, offered);
  return offered;
}

/**
 * Image transformations (`/storage/v1/render/image/…`): a paid-plan feature of hosted Storage that
 * free projects lack; the local backend has them when supabase/config.toml turns on
 * `[storage.image_transformation]`. The question needs no user: a public render of an object that
 * cannot exist (Storage v1.60.2 answers the feature check before it looks anything up).
 * - with them, the lookup fails: `400` with `statusCode` "404" in the body (`NoSuchBucket` or
 *   `NoSuchKey`, whichever lookup answers first);
 * - without them, hosted (the tenant-feature check): `403` `FeatureNotEnabled`; a self-hosted
 *   Storage with them off (the CLI's own stack) has no such routes: Fastify's `404` "Route GET:…
 *   not found".
 * Anything else (unreachable, slow, a gateway's error) decides nothing: null, asked again later.
 */
const imageTransformations = new Map<string, boolean>();
const PROBE_TIMEOUT_MS = 1500;

export async function offersImageTransformations(
  backendUrl: string,
  apiKey: string,
  fetcher: typeof fetch = fetch,
  timeoutMs = PROBE_TIMEOUT_MS,
): Promise<boolean | null> {
  const known = imageTransformations.get(backendUrl);
  if (known !== undefined) return known;
  let status: number;
  let body: { statusCode?: unknown; error?: unknown; message?: unknown } | null;
  try {
    const response = await fetcher(
      `${backendUrl}/storage/v1/render/image/public/edge-notes-feature-probe/none.png?width=1`,
      { headers: { apikey: apiKey }, signal: AbortSignal.timeout(timeoutMs) },
    );
    status = response.status;
    body = (await response.json().catch(() => null)) as typeof body;
  } catch {
    return null;
  }
  const offered =
    status === 400 && body?.statusCode === "404"
      ? true
      : (status === 403 && body?.error === "FeatureNotEnabled") ||
          (status === 404 && /^Route GET:.* not found$/.test(String(body?.message)))
        ? false
        : undefined;
  if (offered === undefined) return null;
  imageTransformations.set(backendUrl, offered);
  return offered;
}
