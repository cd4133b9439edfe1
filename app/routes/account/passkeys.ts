import { authFailureJson } from "../../lib/form-results.server";
import { readFormValues, validateForm } from "../../lib/forms.server";
import { requireUser } from "../../lib/guards.server";
import { jsonNoStore } from "../../lib/http.server";
import type { Route } from "./+types/passkeys";
import { deviceName } from "./parts/device-name";
import { passkeyRegistrationSchema } from "./parts/schemas.server";

/**
 * Adding a passkey, for /account/security's script (JSON in and out; with JavaScript off the
 * button is not offered). `intent=options`: the auth server's creation options for
 * navigator.credentials.create. `intent=verify` (challengeId, credential): the server checks the
 * attestation and keeps the passkey, named after this device ("Chrome on macOS"). requireUser
 * refuses an aal1 session of a user with a second factor (403), as every account form.
 */
export async function action({ request, context }: Route.ActionArgs) {
  const { supabase } = requireUser(request, context);
  const form = await readFormValues(request, { maxBytes: 32 * 1024, echoChars: 0 });
  if (form.intent === "options") {
    const { data, error } = await supabase.auth.passkey.startRegistration();
    if (error || !data) return authFailureJson(error ?? {});
    return jsonNoStore({ challengeId: data.challenge_id, options: data.options });
  }
  if (form.intent !== "verify") {
    return jsonNoStore({ code: "unknown_intent", message: "Unknown passkey step." }, 400);
  }
  const parsed = validateForm(form, passkeyRegistrationSchema);
  if (!parsed.ok) {
    return jsonNoStore(
      { code: "validation_failed", message: "That passkey answer is malformed." },
      400,
    );
  }
  const { data, error } = await supabase.auth.passkey.verifyRegistration({
    challengeId: parsed.data.challengeId,
    credential: parsed.data.credential as never,
  });
  if (error || !data) return authFailureJson(error ?? {});
  const name = deviceName(request.headers.get("User-Agent"));
  await supabase.auth.passkey.update({ passkeyId: data.id, friendlyName: name });
  return jsonNoStore({ id: data.id, name });
}
