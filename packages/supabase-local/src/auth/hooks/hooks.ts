import { randomUUID } from "node:crypto";
import type { HookName } from "../../project/config.ts";
import type { AuthContext } from "../context.ts";
import { AuthError } from "../errors.ts";
import { clientIp } from "../http/request.ts";
import type { Db } from "../models/db.ts";
import { callHookFunction } from "../models/hook-functions.ts";
import { callHttpHook } from "./http.ts";

/**
 * Auth hooks ([auth.hook.<name>] in config.toml), as Auth's v0hooks manager runs them: the event
 * goes to a Postgres function (pg-functions://…, models/hook-functions.ts) or an HTTP endpoint
 * (http.ts), and
 * what comes back either refuses the request (`{"error": {"http_code", "message"}}`) or is the
 * hook's output. Where each one is called from is the caller's module (signup, the password grant,
 * MFA verification, token signing, the email and SMS senders), at the point Auth calls it.
 */

/** The hook's name in its event's metadata (v0hooks.Name). */
const EVENT_NAMES: Record<HookName, string> = {
  before_user_created: "before-user-created",
  custom_access_token: "customize-access-token",
  mfa_verification_attempt: "mfa-verification",
  password_verification_attempt: "password-verification",
  send_email: "send-email",
  send_sms: "send-sms",
};

/** What a hook answered: an object (its output), or nothing (HTTP 204, or SQL null). */
export type HookOutput = Record<string, unknown> | undefined;

export function hookEnabled(ctx: AuthContext, name: HookName): boolean {
  return ctx.config.auth.hooks[name] !== undefined;
}

/**
 * Runs the hook with the event `fields` plus its metadata, and returns its output. A refusal the
 * hook returns is an AuthError with its status and message; a hook that fails (a SQL error, a
 * timeout, an answer that is not JSON) is Auth's 500 `Error running hook URI: …`, its cause logged.
 * `db` is the transaction the caller is in, if any: a Postgres hook runs inside it, as Auth passes
 * its transaction along (the database here is one connection, so another would wait for it).
 */
export async function invokeHook(
  ctx: AuthContext,
  db: Db,
  name: HookName,
  request: Request,
  fields: Record<string, unknown>,
): Promise<HookOutput> {
  const hook = ctx.config.auth.hooks[name];
  if (!hook) throw new Error(`hook ${name} is off`);
  const event = {
    metadata: {
      uuid: randomUUID(),
      time: new Date().toISOString(),
      name: EVENT_NAMES[name],
      ip_address: clientIp(request),
    },
    ...fields,
  };
  let answer: unknown;
  try {
    answer = hook.uri.startsWith("pg-functions:")
      ? await callHookFunction(db, hook.uri, event)
      : await callHttpHook(hook, JSON.stringify(event));
  } catch (error) {
    if (error instanceof AuthError) throw error;
    console.warn(`[local auth] hook ${hook.uri} failed: ${(error as Error).message}`);
    throw new AuthError(500, "unexpected_failure", `Error running hook URI: ${hook.uri}`);
  }
  return hookOutput(answer);
}

/** The hook's answer checked for a refusal (hookserrors.Check), then read as its output. */
function hookOutput(answer: unknown): HookOutput {
  if (answer === undefined || answer === null) return undefined;
  let value = answer;
  if (typeof answer === "string") {
    try {
      value = JSON.parse(answer);
    } catch {
      throw new AuthError(500, "unexpected_failure", "Error unmarshaling JSON output.");
    }
  }
  const refusal = (value as { error?: unknown } | null)?.error;
  if (refusal && typeof refusal === "object") {
    const { http_code: status, message } = refusal as { http_code?: unknown; message?: unknown };
    // An error without a message is no error (Auth's check, kept for compatibility upstream).
    if (typeof message === "string" && message !== "") {
      // no code is a 500, as in Auth; one no HTTP answer can carry is a 500 here too
      const code =
        Number.isInteger(status) && (status as number) >= 200 && (status as number) <= 599
          ? (status as number)
          : 500;
      throw new AuthError(code, code === 500 ? "unexpected_failure" : "unknown", message, {
        uncoded: true,
      });
    }
  }
  if (value === null || typeof value !== "object" || Array.isArray(value))
    throw new AuthError(500, "unexpected_failure", "Error unmarshaling JSON output.");
  return value as Record<string, unknown>;
}

/** A hook's `decision: "reject"` (the MFA and password verification hooks). */
export function rejects(output: HookOutput): output is Record<string, unknown> {
  return output?.decision === "reject";
}
