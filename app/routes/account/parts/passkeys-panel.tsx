import { useState } from "react";
import { Form, useRevalidator } from "react-router";
import { FormAlert } from "../../../components/form-alert";
import { SubmitButton } from "../../../components/submit-button";
import { useHydrated } from "../../../lib/use-hydrated";
import { AccountPanel } from "./account-panel";
import type { PasskeyRow } from "./passkeys.server";

const ENDPOINT = "/account/passkeys";

const dateFormat = new Intl.DateTimeFormat("en", { dateStyle: "medium", timeZone: "UTC" });

/**
 * The passkeys panel of /account/security: each passkey with a rename and a remove form (plain
 * posts to the page's action), and "Add a passkey", which needs JavaScript (the browser makes the
 * key); its helpers load on the click.
 */
export function PasskeysPanel({ passkeys }: { passkeys: PasskeyRow[] }) {
  return (
    <AccountPanel
      title="Passkeys"
      description={
        passkeys.length
          ? "Sign in with your fingerprint, face or device PIN instead of a password."
          : "None yet. A passkey signs you in with your fingerprint, face or device PIN."
      }
    >
      {passkeys.length ? (
        <ul className="divide-y divide-ink-200 dark:divide-ink-800" data-testid="passkeys">
          {passkeys.map((passkey) => (
            <li
              key={passkey.id}
              data-passkey-id={passkey.id}
              className="flex flex-wrap items-end justify-between gap-3 py-3 first:pt-0 last:pb-0"
            >
              <div className="min-w-0">
                <p className="font-medium break-all" id={`passkey-${passkey.id}`}>
                  {passkey.name}
                </p>
                <p className="text-xs text-ink-600 dark:text-ink-400">
                  Added {dateFormat.format(new Date(passkey.createdAt))}
                  {passkey.lastUsedAt
                    ? ` · last used ${dateFormat.format(new Date(passkey.lastUsedAt))}`
                    : ""}
                </p>
              </div>
              <div className="flex flex-wrap items-end gap-2">
                <Form method="post" className="flex items-end gap-2">
                  <input type="hidden" name="passkeyId" value={passkey.id} />
                  <label className="sr-only" htmlFor={`rename-${passkey.id}`}>
                    New name for {passkey.name}
                  </label>
                  <input
                    id={`rename-${passkey.id}`}
                    name="name"
                    defaultValue={passkey.name}
                    maxLength={120}
                    required
                    className="w-40 rounded-lg border border-ink-200 bg-white px-2 py-1.5 text-sm dark:border-ink-600 dark:bg-ink-800"
                  />
                  <SubmitButton
                    intent="rename-passkey"
                    variant="secondary"
                    className="!w-auto !px-3 !py-1.5"
                    aria-describedby={`passkey-${passkey.id}`}
                  >
                    Rename
                  </SubmitButton>
                </Form>
                <Form method="post">
                  <input type="hidden" name="passkeyId" value={passkey.id} />
                  <SubmitButton
                    intent="remove-passkey"
                    variant="secondary"
                    className="!w-auto !px-3 !py-1.5"
                    aria-label={`Remove ${passkey.name}`}
                  >
                    Remove
                  </SubmitButton>
                </Form>
              </div>
            </li>
          ))}
        </ul>
      ) : null}
      <AddPasskey />
    </AccountPanel>
  );
}

function AddPasskey() {
  const hydrated = useHydrated();
  const revalidator = useRevalidator();
  const [busy, setBusy] = useState(false);
  const [result, setResult] = useState<{ ok: boolean; message: string; code?: string } | null>(
    null,
  );
  if (!hydrated || typeof window.PublicKeyCredential !== "function") {
    return (
      <p className="mt-4 text-sm text-muted" data-testid="passkey-needs-javascript">
        Adding a passkey needs a browser with JavaScript on.
      </p>
    );
  }
  async function add() {
    setBusy(true);
    setResult(null);
    try {
      const webauthn = await import("../../../lib/webauthn.client");
      const { challengeId, options } = await webauthn.postForm(ENDPOINT, { intent: "options" });
      const credential = await webauthn.createCredential(
        options as Record<string, unknown>,
        new AbortController().signal,
      );
      const added = await webauthn.postForm(ENDPOINT, {
        intent: "verify",
        challengeId: String(challengeId),
        credential: JSON.stringify(credential),
      });
      setResult({ ok: true, message: `Passkey “${String(added.name)}” added.` });
      await revalidator.revalidate();
    } catch (error) {
      const name = (error as { name?: string }).name;
      setResult({
        ok: false,
        message:
          name === "NotAllowedError" || name === "AbortError"
            ? "No passkey was added."
            : (error as Error).message || "The passkey could not be added.",
        code: (error as { code?: string }).code,
      });
    } finally {
      setBusy(false);
    }
  }
  return (
    <div className="mt-4 space-y-3">
      {result ? (
        <FormAlert tone={result.ok ? "success" : "error"} code={result.code}>
          {result.message}
        </FormAlert>
      ) : null}
      <button
        type="button"
        onClick={add}
        disabled={busy}
        aria-busy={busy || undefined}
        className="inline-flex items-center justify-center rounded-lg bg-brand-600 px-4 py-2.5 text-sm font-medium text-white transition-colors hover:bg-brand-700 disabled:cursor-not-allowed disabled:bg-brand-600/70"
      >
        Add a passkey
      </button>
    </div>
  );
}
