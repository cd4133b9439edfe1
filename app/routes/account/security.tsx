import { AuthError, type Factor } from "@supabase/supabase-js";
import { data, Form } from "react-router";
import { FormAlert } from "../../components/form-alert";
import { FormField } from "../../components/form-field";
import { SubmitButton } from "../../components/submit-button";
import { offersRecoveryCodes } from "../../lib/backend-features.server";
import { authFailure, formFailure, formNotice, formRefusal } from "../../lib/form-results.server";
import { type FormFailure, readFormValues, validateForm } from "../../lib/forms.server";
import { requireFreshUser, requireUser } from "../../lib/guards.server";
import { noStoreHeaders } from "../../lib/http.server";
import { useFocusFirstError } from "../../lib/use-focus-first-error";
import { getSupabaseEnv } from "../../lib/worker-context.server";
import { TotpCodeField } from "../auth/parts/auth-fields";
import type { Route } from "./+types/security";
import { AccountHeading, AccountPanel } from "./parts/account-panel";
import { listPasskeys, removePasskey, renamePasskey } from "./parts/passkeys.server";
import { PasskeysPanel } from "./parts/passkeys-panel";
import {
  generateRecoveryCodes,
  hasRecoveryCodes,
  recoveryCodesStatus,
} from "./parts/recovery-codes.server";
import { RecoveryCodesPanel } from "./parts/recovery-codes-panel";
import { enrollSchema, removeFactorSchema, verifyEnrollmentSchema } from "./parts/schemas.server";
import { groupSecret, totpQrCode } from "./parts/totp-qr";

export const headers: Route.HeadersFunction = noStoreHeaders;

export const meta: Route.MetaFunction = () => [{ title: "Security · Account · Edge Notes" }];

/** The enrollment in progress, carried between the "add" and "verify" posts. */
interface Enrollment {
  factorId: string;
  name: string;
  secret: string;
  uri: string;
  qr: string;
}

function verifiedTotp(factors: Factor[] | undefined) {
  return (factors ?? []).filter((f) => f.factor_type === "totp" && f.status === "verified");
}

export async function loader({ request, context }: Route.LoaderArgs) {
  const { claims, supabase } = requireUser(request, context);
  // The fresh user, the passkeys and the recovery codes' count side by side: one round trip's
  // wait. Only an aal2 session can have recovery codes; the fresh user says whether there is a set.
  const [{ user }, { passkeys }, offered, codes] = await Promise.all([
    requireFreshUser(request, context),
    listPasskeys(supabase),
    // Only where the backend has them (a preview hosted Supabase lacks): otherwise no panel.
    offersRecoveryCodes(supabase, getSupabaseEnv(context).url),
    claims.aal === "aal2" ? recoveryCodesStatus(supabase) : null,
  ]);
  return {
    passkeys,
    recoveryCodes: offered === true ? { status: hasRecoveryCodes(user) ? codes : null } : null,
    factors: verifiedTotp(user.factors).map((f) => ({
      id: f.id,
      name: f.friendly_name ?? "Authenticator app",
      createdAt: f.created_at,
    })),
    aal: (claims.aal as string | undefined) ?? null,
  };
}

/**
 * Authenticator apps (TOTP): add one (the server returns a secret and its QR code; the factor
 * counts only once a first code from the app is verified, which also lifts this session to
 * aal2), or remove one (the server requires an aal2 session; requireUser already refuses an aal1
 * session of a user with a verified factor).
 */
export async function action({ request, context }: Route.ActionArgs) {
  const { supabase } = requireUser(request, context);
  const form = await readFormValues(request);
  switch (form.intent) {
    case "enroll": {
      const parsed = validateForm(form, enrollSchema);
      if (!parsed.ok) return formFailure(parsed);
      const { name } = parsed.data;
      const { data: fresh } = await supabase.auth.getUser();
      const factors = fresh.user?.factors ?? [];
      const taken = verifiedTotp(factors).some(
        (f) => (f.friendly_name ?? "").trim().toLowerCase() === name.toLowerCase(),
      );
      if (taken) {
        return formRefusal(
          "You already have an authenticator with this name. Choose another name.",
          409,
          "mfa_factor_name_conflict",
          parsed.values,
          "name",
        );
      }
      // An earlier setup that was never finished holds its name: remove it first.
      for (const stale of factors.filter((f) => f.status === "unverified")) {
        await supabase.auth.mfa.unenroll({ factorId: stale.id });
      }
      const enrolled = await supabase.auth.mfa.enroll({ factorType: "totp", friendlyName: name });
      if (enrolled.error) return authFailure(enrolled.error, parsed.values);
      const enrollment: Enrollment = {
        factorId: enrolled.data.id,
        name,
        secret: enrolled.data.totp.secret,
        uri: enrolled.data.totp.uri,
        qr: totpQrCode(enrolled.data.totp.qr_code),
      };
      return formNotice("Scan the code with your authenticator app.", { enrollment });
    }
    case "verify": {
      const parsed = validateForm(form, verifyEnrollmentSchema);
      const enrollment: Enrollment = {
        factorId: form.factorId?.slice(0, 64) ?? "",
        name: form.name?.slice(0, 60) ?? "",
        secret: /^[A-Z2-7=]{0,128}$/.test(form.secret ?? "") ? (form.secret ?? "") : "",
        uri: form.uri?.startsWith("otpauth://") ? form.uri.slice(0, 1024) : "",
        qr: verifyEnrollmentSchema.shape.qr.parse(form.qr),
      };
      if (!parsed.ok) return withEnrollment(formFailure(parsed), enrollment);
      const { factorId, code } = parsed.data;
      const { error } = await supabase.auth.mfa.challengeAndVerify({ factorId, code });
      if (error) {
        const failed = authFailure(error, { name: enrollment.name });
        return withEnrollment(failed, enrollment);
      }
      return formNotice(
        `“${enrollment.name || "Authenticator app"}” is on. From now on, signing in asks for a code from it.`,
      );
    }
    case "cancel": {
      const parsed = validateForm(form, removeFactorSchema);
      if (parsed.ok) {
        const { data: fresh } = await supabase.auth.getUser();
        const pending = fresh.user?.factors?.find(
          (f) => f.id === parsed.data.factorId && f.status === "unverified",
        );
        if (pending) await supabase.auth.mfa.unenroll({ factorId: pending.id });
      }
      return formNotice("Setup cancelled. Nothing was added.");
    }
    case "remove": {
      const parsed = validateForm(form, removeFactorSchema);
      if (!parsed.ok) return formFailure(parsed, 404);
      const { data: fresh } = await supabase.auth.getUser();
      const factor = fresh.user?.factors?.find((f) => f.id === parsed.data.factorId);
      if (!factor) {
        return formRefusal(
          "That authenticator doesn't exist (it may have been removed already).",
          404,
          "mfa_factor_not_found",
        );
      }
      const { error } = await supabase.auth.mfa.unenroll({ factorId: factor.id });
      if (error) return authFailure(error, {});
      // The session's stored user still lists the factor until its next refresh: refresh now.
      await supabase.auth.refreshSession();
      return formNotice(`“${factor.friendly_name ?? "Authenticator app"}” was removed.`);
    }
    case "generate-recovery-codes":
    case "regenerate-recovery-codes": {
      const replace = form.intent === "regenerate-recovery-codes";
      if ((await offersRecoveryCodes(supabase, getSupabaseEnv(context).url)) === false) {
        return formRefusal(
          "Recovery codes are not available here.",
          404,
          "recovery_codes_not_offered",
        );
      }
      const { data: made, error } = await generateRecoveryCodes(supabase, replace);
      if (error || !made) return authFailure(error ?? new AuthError("No codes"), {});
      return formNotice(
        replace ? "A new set of recovery codes replaces the old one." : "Recovery codes made.",
        { recoveryCodes: made.codes },
      );
    }
    case "rename-passkey":
      return renamePasskey(supabase, form);
    case "remove-passkey":
      return removePasskey(supabase, form);
    default:
      return formRefusal("Choose one of the buttons on this page.", 400, "unknown_intent");
  }
}

/** A failure answer plus the enrollment in progress, so the QR code and secret stay shown. */
function withEnrollment(
  answer: { data: FormFailure; init: ResponseInit | null },
  enrollment: Enrollment,
) {
  return data({ ...answer.data, enrollment }, answer.init ?? undefined);
}

const dateFormat = new Intl.DateTimeFormat("en", { dateStyle: "medium", timeZone: "UTC" });

export default function AccountSecurity({ loaderData, actionData }: Route.ComponentProps) {
  const failure = actionData && !actionData.ok ? actionData : undefined;
  const formRef = useFocusFirstError(failure);
  const errors = failure?.errors;
  const enrollment =
    actionData && "enrollment" in actionData
      ? (actionData.enrollment as Enrollment | undefined)
      : undefined;
  const { factors, passkeys, recoveryCodes } = loaderData;
  const newCodes =
    actionData && "recoveryCodes" in actionData
      ? (actionData.recoveryCodes as string[] | undefined)
      : undefined;
  return (
    <div className="space-y-6">
      <AccountHeading
        title="Security"
        intro="Passkeys, and a code from an authenticator app on your phone asked for after your password."
      />
      {actionData?.ok && !enrollment ? (
        <FormAlert tone="success">{actionData.notice}</FormAlert>
      ) : null}
      {errors?.form && !enrollment ? <FormAlert code={errors.code}>{errors.form}</FormAlert> : null}

      <PasskeysPanel passkeys={passkeys} />

      <AccountPanel
        title="Authenticator apps"
        description={
          factors.length
            ? "Signing in asks for a code from one of these."
            : "None yet: your account is protected by your password only."
        }
      >
        {factors.length ? (
          <ul className="divide-y divide-ink-200 dark:divide-ink-800" data-testid="factors">
            {factors.map((factor) => (
              <li
                key={factor.id}
                data-factor-id={factor.id}
                className="flex flex-wrap items-center justify-between gap-3 py-3 first:pt-0 last:pb-0"
              >
                <div className="min-w-0">
                  <p className="font-medium break-all">{factor.name}</p>
                  <p className="text-xs text-ink-600 dark:text-ink-400">
                    Added {dateFormat.format(new Date(factor.createdAt))}
                  </p>
                </div>
                <Form method="post">
                  <input type="hidden" name="factorId" value={factor.id} />
                  <SubmitButton
                    intent="remove"
                    variant="secondary"
                    className="!w-auto !px-3 !py-1.5"
                    aria-label={`Remove ${factor.name}`}
                  >
                    Remove
                  </SubmitButton>
                </Form>
              </li>
            ))}
          </ul>
        ) : null}
      </AccountPanel>

      {enrollment ? (
        <AccountPanel
          title={`Set up “${enrollment.name || "Authenticator app"}”`}
          description="Scan the QR code with an authenticator app (1Password, Google Authenticator, Authy…), then enter the 6-digit code it shows."
        >
          <div className="grid gap-6 sm:grid-cols-[12rem_1fr]">
            <div>
              {enrollment.qr ? (
                <img
                  src={enrollment.qr}
                  alt="QR code for your authenticator app"
                  width={192}
                  height={192}
                  className="size-48 rounded-lg border border-ink-200 bg-white p-2 dark:border-ink-600"
                  data-testid="totp-qr"
                />
              ) : null}
            </div>
            <div className="min-w-0 space-y-4">
              <div className="text-sm">
                <p className="text-ink-600 dark:text-ink-400">
                  Can't scan? Enter this key instead:
                </p>
                <code
                  className="mt-1 block rounded-lg bg-ink-100 px-3 py-2 font-mono text-sm break-all select-all dark:bg-ink-800"
                  data-testid="totp-secret"
                  data-secret={enrollment.secret}
                >
                  {groupSecret(enrollment.secret)}
                </code>
              </div>
              <Form method="post" noValidate ref={formRef} className="space-y-4">
                {errors?.form ? <FormAlert code={errors.code}>{errors.form}</FormAlert> : null}
                <input type="hidden" name="factorId" value={enrollment.factorId} />
                <input type="hidden" name="name" value={enrollment.name} />
                <input type="hidden" name="secret" value={enrollment.secret} />
                <input type="hidden" name="uri" value={enrollment.uri} />
                <input type="hidden" name="qr" value={enrollment.qr} />
                <TotpCodeField
                  label="Code from the app"
                  error={errors?.fields.code}
                  className="sm:max-w-xs"
                />
                <div className="flex flex-wrap items-center gap-4">
                  <SubmitButton intent="verify" className="sm:w-auto">
                    Verify and turn on
                  </SubmitButton>
                  <SubmitButton intent="cancel" variant="link" formNoValidate>
                    Cancel
                  </SubmitButton>
                </div>
              </Form>
            </div>
          </div>
        </AccountPanel>
      ) : (
        <AccountPanel
          title="Add an authenticator app"
          description="Name it after the device it's on, so you can tell your authenticators apart."
        >
          <Form method="post" noValidate ref={formRef} className="space-y-4 sm:max-w-md">
            <FormField
              label="Name"
              name="name"
              autoComplete="off"
              maxLength={60}
              required
              placeholder="My phone"
              defaultValue={failure?.values.name}
              error={errors?.fields.name}
            />
            <SubmitButton intent="enroll" className="sm:w-auto">
              Add authenticator app
            </SubmitButton>
          </Form>
        </AccountPanel>
      )}

      {recoveryCodes ? (
        <RecoveryCodesPanel
          status={recoveryCodes.status}
          hasTotp={factors.length > 0}
          codes={newCodes}
        />
      ) : null}
    </div>
  );
}
