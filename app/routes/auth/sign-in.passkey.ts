import { getAuth } from "../../lib/auth.server";
import { authFailureJson } from "../../lib/form-results.server";
import { readFormValues, validateForm } from "../../lib/forms.server";
import { jsonNoStore } from "../../lib/http.server";
import type { Route } from "./+types/sign-in.passkey";
import { afterSignIn } from "./parts/after-sign-in.server";
import { passkeySignInSchema } from "./parts/schemas.server";

/**
 * Sign in with a passkey, for the sign-in page's script (JSON in and out; with JavaScript off the
 * option is not offered). `intent=options`: the auth server's challenge and request options for
 * navigator.credentials.get. `intent=verify` (challengeId, credential, next): the auth server
 * checks the assertion and starts the session (cookies set on this answer); the answer says where
 * to go, through the same rule as every sign-in (`/mfa` first when a second factor is owed).
 */
export async function action({ request, context }: Route.ActionArgs) {
  const { supabase } = getAuth(context);
  const form = await readFormValues(request, { maxBytes: 32 * 1024, echoChars: 0 });
  if (form.intent === "options") {
    const { data, error } = await supabase.auth.passkey.startAuthentication();
    if (error || !data) return authFailureJson(error ?? {});
    return jsonNoStore({ challengeId: data.challenge_id, options: data.options });
  }
  if (form.intent !== "verify") {
    return jsonNoStore({ code: "unknown_intent", message: "Unknown passkey step." }, 400);
  }
  const parsed = validateForm(form, passkeySignInSchema);
  if (!parsed.ok) {
    return jsonNoStore(
      { code: "validation_failed", message: "That passkey answer is malformed." },
      400,
    );
  }
  const { challengeId, credential, next } = parsed.data;
  const { error } = await supabase.auth.passkey.verifyAuthentication({
    challengeId,
    credential: credential as never,
  });
  if (error) return authFailureJson(error);
  const answer = await afterSignIn(supabase, { next });
  return jsonNoStore({ redirectTo: answer.headers.get("Location") ?? "/" });
}
