import { useEffect, useRef, useState } from "react";
import { useNavigate } from "react-router";
import { FormAlert } from "../../../components/form-alert";
import { useHydrated } from "../../../lib/use-hydrated";
import { Divider } from "./divider";

type WebAuthn = typeof import("../../../lib/webauthn.client");

const ENDPOINT = "/sign-in/passkey";

/**
 * "Sign in with a passkey" and passkey autofill on the email field (`autocomplete="username
 * webauthn"`). Only with JavaScript (the server render shows nothing) and a browser that has
 * WebAuthn. The ceremony's helpers load on idle or on the click, never in the first load; the
 * server fetches the challenge and checks the answer (/sign-in/passkey), and says where to go.
 */
export function PasskeySignIn({ next }: { next?: string }) {
  const hydrated = useHydrated();
  const navigate = useNavigate();
  const [busy, setBusy] = useState(false);
  const [failure, setFailure] = useState<{ message: string; code: string } | null>(null);
  const pending = useRef<AbortController | null>(null);
  const supported = hydrated && typeof window.PublicKeyCredential === "function";

  async function ceremony(webauthn: WebAuthn, mediation?: CredentialMediationRequirement) {
    // One WebAuthn request at a time: a click cancels the waiting autofill request.
    pending.current?.abort();
    const controller = new AbortController();
    pending.current = controller;
    try {
      const { challengeId, options } = await webauthn.postForm(ENDPOINT, { intent: "options" });
      const credential = await webauthn.getAssertion(
        options as Record<string, unknown>,
        mediation,
        controller.signal,
      );
      setBusy(true);
      setFailure(null);
      const { redirectTo } = await webauthn.postForm(ENDPOINT, {
        intent: "verify",
        challengeId: String(challengeId),
        credential: JSON.stringify(credential),
        next: next ?? "",
      });
      navigate(String(redirectTo), { replace: true });
    } catch (error) {
      setBusy(false);
      if (controller.signal.aborted) return;
      const code = (error as { code?: string }).code;
      if (mediation === "conditional" && code === "webauthn_challenge_expired") {
        void ceremony(webauthn, "conditional");
        return;
      }
      if (mediation === "conditional") return;
      const name = (error as { name?: string }).name;
      setFailure(
        name === "NotAllowedError" || name === "AbortError"
          ? { message: "No passkey was used. Try again, or sign in another way.", code: "" }
          : {
              message: (error as Error).message || "Signing in with a passkey didn't work.",
              code: code ?? "",
            },
      );
    }
  }

  // Passkey autofill: once the page is idle, a quiet request the email field's suggestions answer.
  useEffect(() => {
    if (!supported) return;
    let cancelled = false;
    const idle = window.requestIdleCallback ?? ((cb: () => void) => window.setTimeout(cb, 1));
    idle(async () => {
      const webauthn = await import("../../../lib/webauthn.client");
      if (!cancelled && (await webauthn.supportsAutofill())) void ceremony(webauthn, "conditional");
    });
    return () => {
      cancelled = true;
      pending.current?.abort();
    };
  }, [supported]);

  if (!supported) return null;
  return (
    <div data-testid="passkey-sign-in">
      <Divider>or use a passkey</Divider>
      {failure ? <FormAlert code={failure.code || undefined}>{failure.message}</FormAlert> : null}
      <button
        type="button"
        disabled={busy}
        aria-busy={busy || undefined}
        onClick={async () => ceremony(await import("../../../lib/webauthn.client"))}
        className="mt-3 inline-flex w-full items-center justify-center gap-2 rounded-lg border border-ink-200 bg-white px-4 py-2.5 text-sm font-medium text-ink-800 transition-colors hover:bg-ink-50 disabled:cursor-not-allowed disabled:opacity-60 dark:border-ink-600 dark:bg-ink-800 dark:text-ink-50"
      >
        Sign in with a passkey
      </button>
    </div>
  );
}
