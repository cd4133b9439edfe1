import { useState } from "react";
import { Form } from "react-router";
import { FormAlert } from "../../../components/form-alert";
import { SubmitButton } from "../../../components/submit-button";
import { useHydrated } from "../../../lib/use-hydrated";
import { AccountPanel } from "./account-panel";
import { FEW_RECOVERY_CODES, groupCode, type RecoveryCodesStatus } from "./recovery-codes";

/**
 * The recovery codes panel of /account/security: generate a set (once there is an authenticator
 * app to back up), see a new set once with Copy and Download, see how many remain, regenerate.
 */
export function RecoveryCodesPanel({
  status,
  hasTotp,
  codes,
}: {
  status: RecoveryCodesStatus | null;
  hasTotp: boolean;
  codes?: string[];
}) {
  if (!hasTotp && !status) {
    return (
      <AccountPanel
        title="Recovery codes"
        description="Add an authenticator app first: recovery codes stand in for it if you lose your phone."
      >
        <p className="text-sm text-muted">No recovery codes yet.</p>
      </AccountPanel>
    );
  }
  return (
    <AccountPanel
      title="Recovery codes"
      description="Single-use codes that sign you in if you lose your authenticator app. Keep them somewhere safe."
    >
      {codes?.length ? <NewCodes codes={codes} /> : null}
      {status && !codes?.length ? (
        <div className="space-y-3" data-testid="recovery-codes-status">
          <p className="text-sm">
            <span className="font-medium">{status.remaining}</span> of {status.total} codes left.
          </p>
          {status.remaining <= FEW_RECOVERY_CODES ? (
            <FormAlert>
              Only {status.remaining} recovery {status.remaining === 1 ? "code is" : "codes are"}{" "}
              left. Make a new set and keep it safe.
            </FormAlert>
          ) : null}
        </div>
      ) : null}
      <Form method="post" className="mt-4">
        {status || codes?.length ? (
          <SubmitButton
            intent="regenerate-recovery-codes"
            variant="secondary"
            className="sm:w-auto"
          >
            Make a new set
          </SubmitButton>
        ) : (
          <SubmitButton intent="generate-recovery-codes" className="sm:w-auto">
            Generate recovery codes
          </SubmitButton>
        )}
      </Form>
      {status || codes?.length ? (
        <p className="mt-2 text-xs text-muted">
          A new set replaces the old one: its codes stop working.
        </p>
      ) : null}
    </AccountPanel>
  );
}

function NewCodes({ codes }: { codes: string[] }) {
  const hydrated = useHydrated();
  const [copied, setCopied] = useState(false);
  const text = `Edge Notes recovery codes (each works once)\n\n${codes.map(groupCode).join("\n")}\n`;
  return (
    <div className="space-y-3">
      <FormAlert tone="success">Save these codes now: they are shown only this once.</FormAlert>
      <ol
        className="grid grid-cols-2 gap-2 rounded-lg bg-ink-100 p-3 font-mono text-sm dark:bg-ink-800"
        data-testid="recovery-codes"
      >
        {codes.map((code) => (
          <li key={code} data-code={code}>
            {groupCode(code)}
          </li>
        ))}
      </ol>
      <div className="flex flex-wrap gap-3">
        <a
          href={`data:text/plain;charset=utf-8,${encodeURIComponent(text)}`}
          download="edge-notes-recovery-codes.txt"
          className="inline-flex items-center rounded-lg border border-ink-200 px-3 py-1.5 text-sm font-medium dark:border-ink-600"
        >
          Download
        </a>
        {hydrated && navigator.clipboard ? (
          <button
            type="button"
            onClick={async () => {
              await navigator.clipboard.writeText(text);
              setCopied(true);
            }}
            className="inline-flex items-center rounded-lg border border-ink-200 px-3 py-1.5 text-sm font-medium dark:border-ink-600"
          >
            {copied ? "Copied" : "Copy"}
          </button>
        ) : null}
      </div>
    </div>
  );
}
