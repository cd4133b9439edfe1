import type { SupabaseClient } from "@supabase/supabase-js";
import { Form } from "react-router";
import { AuthCard, FooterLink } from "../../components/auth-card";
import { FormAlert } from "../../components/form-alert";
import { FormField } from "../../components/form-field";
import { SubmitButton } from "../../components/submit-button";
import { getAuth } from "../../lib/auth.server";
import { offersRecoveryCodes } from "../../lib/backend-features.server";
import { authFailure, formFailure, formRefusal } from "../../lib/form-results.server";
import { readFormValues, validateForm } from "../../lib/forms.server";
import { owesSecondFactor, SIGN_IN_PATH } from "../../lib/guards.server";
import { noStoreHeaders, redirectNoStore } from "../../lib/http.server";
import { withNext } from "../../lib/next-path";
import { safeNext } from "../../lib/safe-redirect";
import { useFocusFirstError } from "../../lib/use-focus-first-error";
import { getSupabaseEnv } from "../../lib/worker-context.server";
import type { Route } from "./+types/mfa";
import { TotpCodeField } from "./parts/auth-fields";
import { nextFromUrl, redirectToNext } from "./parts/redirects.server";
import { challengeSchema, recoveryCodeSchema } from "./parts/schemas.server";

export const headers: Route.HeadersFunction = noStoreHeaders;

export const meta: Route.MetaFunction = () => [{ title: "Two-factor check · Edge Notes" }];

/**
 * The second step of signing in for users with an authenticator app. It is the one signed-in
 * page exempt from the aal2 rule; it sends away anyone who has nothing to prove (signed out: to
 * sign in; already aal2 or no factor: straight to `next`), so it can never loop.
 */
export async function loader({ request, context }: Route.LoaderArgs) {
  const auth = getAuth(context);
  const next = nextFromUrl(request);
  if (!auth.claims) throw redirectNoStore(withNext(SIGN_IN_PATH, next));
  if (!(await owesSecondFactor(auth))) throw redirectToNext(next);
  const [{ data }, recoveryCodes] = await Promise.all([
    auth.supabase.auth.mfa.listFactors(),
    // "Use a recovery code" only where the backend has them (a preview hosted Supabase lacks).
    offersRecoveryCodes(auth.supabase, getSupabaseEnv(context).url).then((has) => has === true),
  ]);
  const factors = (data?.totp ?? []).map((f) => ({ id: f.id, name: f.friendly_name ?? "" }));
  return { next, factors, recoveryCodes, email: (auth.claims.email as string | undefined) ?? null };
}

export async function action({ request, context }: Route.ActionArgs) {
  const auth = getAuth(context);
  const form = await readFormValues(request);
  if (!auth.claims) return redirectNoStore(SIGN_IN_PATH);
  if (!(await owesSecondFactor(auth))) return redirectToNext(safeNext(form.next));
  if (form.intent === "recovery") {
    if ((await offersRecoveryCodes(auth.supabase, getSupabaseEnv(context).url)) === false) {
      return formRefusal(
        "Recovery codes are not available here. Use your authenticator app.",
        404,
        "recovery_codes_not_offered",
      );
    }
    return verifyRecoveryCode(auth.supabase, form);
  }
  const parsed = validateForm(form, challengeSchema);
  if (!parsed.ok) return formFailure(parsed);
  const { code, next } = parsed.data;
  const { data: listed, error: listError } = await auth.supabase.auth.mfa.listFactors();
  if (listError) return authFailure(listError, parsed.values);
  const factors = listed.totp;
  const factor = factors.find((f) => f.id === parsed.data.factorId) ?? factors[0];
  if (!factor) {
    return formRefusal(
      "Your account has no authenticator app any more. Sign out and sign in again.",
      404,
      "mfa_factor_not_found",
      parsed.values,
    );
  }
  const { error } = await auth.supabase.auth.mfa.challengeAndVerify({ factorId: factor.id, code });
  if (error) return authFailure(error, parsed.values);
  return redirectToNext(next);
}

/**
 * "Use a recovery code" instead of the app: one of the single-use codes (case, spaces and dashes
 * ignored by the server) lifts the session to aal2, as a code from the app would.
 */
async function verifyRecoveryCode(supabase: SupabaseClient, form: Record<string, string>) {
  const parsed = validateForm(form, recoveryCodeSchema);
  if (!parsed.ok) return formFailure(parsed);
  const { recoveryCode, next } = parsed.data;
  const { error } = await supabase.auth.mfa.recoveryCodes.verify({ code: recoveryCode });
  if (error) {
    return authFailure(error, parsed.values, {
      wording: {
        mfa_verification_failed: {
          place: "recoveryCode",
          message: "That recovery code is wrong or was used already. Each code works once.",
        },
        mfa_factor_not_found: {
          place: "recoveryCode",
          message: "Your account has no recovery codes. Use your authenticator app.",
        },
      },
    });
  }
  return redirectToNext(next);
}

export default function Mfa({ loaderData, actionData }: Route.ComponentProps) {
  const formRef = useFocusFirstError(actionData);
  const errors = actionData?.errors;
  const { factors, next, recoveryCodes } = loaderData;
  return (
    <AuthCard
      title="Enter your code"
      intro="Open your authenticator app and enter the 6-digit code for Edge Notes."
      footer={
        <FooterLink to="/sign-out" prompt="Not you, or lost your phone?">
          Sign out
        </FooterLink>
      }
    >
      <Form method="post" noValidate ref={formRef} className="space-y-4">
        <input type="hidden" name="next" value={next ?? ""} />
        {errors?.form ? <FormAlert code={errors.code}>{errors.form}</FormAlert> : null}
        {factors.length > 1 ? (
          <div>
            <label htmlFor="field-factorId" className="block text-sm font-medium">
              Authenticator
            </label>
            <select
              id="field-factorId"
              name="factorId"
              defaultValue={actionData?.values.factorId}
              className="mt-1.5 block w-full rounded-lg border border-control bg-field px-3 py-2 text-base sm:text-sm"
            >
              {factors.map((f) => (
                <option key={f.id} value={f.id}>
                  {f.name || "Authenticator app"}
                </option>
              ))}
            </select>
          </div>
        ) : factors[0] ? (
          <input type="hidden" name="factorId" value={factors[0].id} />
        ) : null}
        <TotpCodeField label="Code" error={errors?.fields.code} />
        <SubmitButton intent="verify">Continue</SubmitButton>
      </Form>
      {recoveryCodes ? <RecoveryCodeForm next={next} actionData={actionData} /> : null}
    </AuthCard>
  );
}

/** "Use a recovery code": a form of its own, folded away. */
function RecoveryCodeForm({
  next,
  actionData,
}: {
  next: string | undefined;
  actionData: Route.ComponentProps["actionData"];
}) {
  const errors = actionData?.errors;
  return (
    <details
      className="mt-6 rounded-lg border border-line px-4 py-3 text-sm"
      open={actionData?.values.intent === "recovery"}
    >
      <summary className="cursor-pointer font-medium">Use a recovery code</summary>
      <Form method="post" noValidate className="mt-3 space-y-3">
        <input type="hidden" name="next" value={next ?? ""} />
        <p className="text-muted">
          Lost your phone? Enter one of the recovery codes you saved. Each works once.
        </p>
        <FormField
          label="Recovery code"
          name="recoveryCode"
          autoComplete="one-time-code"
          autoCapitalize="none"
          spellCheck={false}
          required
          error={errors?.fields.recoveryCode}
        />
        <SubmitButton intent="recovery" variant="secondary">
          Use recovery code
        </SubmitButton>
      </Form>
    </details>
  );
}
