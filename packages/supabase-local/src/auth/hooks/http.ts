import { randomUUID } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import { Webhook } from "standardwebhooks";
import type { HookConfig } from "../../project/config.ts";
import { AuthError } from "../errors.ts";

/** hookshttp's limits: 5 s for the whole call, 3 attempts 2 s apart, 200 KB of answer. */
const TIMEOUT_MS = 5000;
const ATTEMPTS = 3;
const BACKOFF_MS = 2000;
const ANSWER_LIMIT = 200 * 1024;

/**
 * An HTTP hook, called as Auth's hookshttp calls it: a POST of the event, signed with each secret
 * by the Standard Webhooks scheme (`webhook-id`, `webhook-timestamp`, `webhook-signature`), given
 * 5 s in all, redirects followed (as Go's client does); a connection that fails is tried again (3
 * attempts), as is a 429 or 503 that says `retry-after`. Returns the JSON it answered (a string),
 * or undefined for a 204. Its other answers are Auth's errors, with Auth's messages.
 */
export async function callHttpHook(hook: HookConfig, payload: string): Promise<unknown> {
  const deadline = AbortSignal.timeout(TIMEOUT_MS);
  const timedOut = () =>
    new AuthError(
      422,
      "hook_timeout",
      `Failed to reach hook within maximum time of ${(TIMEOUT_MS / 1000).toFixed(6)} seconds`,
    );
  for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
    const id = randomUUID();
    const now = new Date();
    // Standard Webhooks' key is what follows `v1,` (and the library drops `whsec_`).
    const signatures = hook.secrets.map((secret) =>
      new Webhook(secret.replace(/^v1,/, "")).sign(id, now, payload),
    );
    let response: Response;
    try {
      response = await fetch(hook.uri, {
        method: "POST",
        body: payload,
        signal: deadline,
        headers: {
          "Content-Type": "application/json",
          "webhook-id": id,
          "webhook-timestamp": String(Math.floor(now.getTime() / 1000)),
          "webhook-signature": signatures.join(", "),
          "Accept-Encoding": "identity",
        },
      });
    } catch {
      if (deadline.aborted) throw timedOut();
      if (attempt < ATTEMPTS - 1) {
        await sleep(BACKOFF_MS, undefined, { signal: deadline }).catch(() => {
          throw timedOut();
        });
        continue;
      }
      throw new AuthError(
        422,
        "hook_timeout_after_retry",
        "Failed to reach hook after maximum retries",
      );
    }
    switch (response.status) {
      case 204:
        await response.body?.cancel();
        return undefined;
      case 200:
      case 202:
        return readJson(response);
      case 429:
      case 503:
        await response.body?.cancel();
        if (response.headers.get("retry-after")) continue;
        throw new AuthError(500, "unexpected_failure", "Service currently unavailable due to hook");
      case 400:
        await response.body?.cancel();
        throw new AuthError(500, "unexpected_failure", "Invalid payload sent to hook");
      case 401:
        await response.body?.cancel();
        throw new AuthError(500, "unexpected_failure", "Hook requires authorization token");
      default:
        await response.body?.cancel();
        throw new AuthError(
          500,
          "unexpected_failure",
          `Unexpected status code returned from hook: ${response.status}`,
        );
    }
  }
  throw new AuthError(500, "unexpected_failure", "Service currently unavailable due to hook");
}

/** A 200 or 202's body: JSON by its Content-Type, at most 200 KB. */
async function readJson(response: Response): Promise<string> {
  const contentType = response.headers.get("content-type");
  const invalid = (message: string) =>
    new AuthError(400, "hook_payload_invalid_content_type", message);
  if (!contentType) {
    await response.body?.cancel();
    throw invalid("Invalid Content-Type: Missing Content-Type header");
  }
  const mediaType = (contentType.split(";")[0] ?? "").trim().toLowerCase();
  if (mediaType !== "application/json") {
    await response.body?.cancel();
    throw invalid(`Invalid JSON response. Received content-type: ${contentType}`);
  }
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const chunk of response.body ?? []) {
    size += chunk.byteLength;
    if (size > ANSWER_LIMIT) {
      await response.body?.cancel().catch(() => {});
      throw new AuthError(
        422,
        "hook_payload_over_size_limit",
        `Payload size exceeded size limit of ${ANSWER_LIMIT} bytes`,
      );
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks).toString("utf8");
}
