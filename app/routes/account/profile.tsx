import type { SupabaseClient } from "@supabase/supabase-js";
import { Form, Link } from "react-router";
import { FormAlert } from "../../components/form-alert";
import { FormField } from "../../components/form-field";
import { SubmitButton } from "../../components/submit-button";
import { offersRecoveryCodes } from "../../lib/backend-features.server";
import { formFailure } from "../../lib/form-results.server";
import { parseForm } from "../../lib/forms.server";
import { requireUser } from "../../lib/guards.server";
import { backendFailure, dataNoStore } from "../../lib/http.server";
import { toSessionUser } from "../../lib/session-user";
import { useFocusFirstError } from "../../lib/use-focus-first-error";
import { getSupabaseEnv } from "../../lib/worker-context.server";
import type { Route } from "./+types/profile";
import { AvatarForm } from "./parts/avatar-form";
import { DISPLAY_NAME_MAX, USERNAME_RULES } from "./parts/profile-rules";
import { FEW_RECOVERY_CODES } from "./parts/recovery-codes";
import { profileSchema } from "./parts/schemas.server";

export const meta: Route.MetaFunction = () => [{ title: "Profile · Edge Notes" }];

export async function loader({ request, context }: Route.LoaderArgs) {
  const { supabase, claims } = requireUser(request, context);
  const [{ data: profile, error }, codesLeft] = await Promise.all([
    supabase
      .from("profiles")
      .select("username, display_name, avatar_path")
      .eq("id", claims.sub)
      .maybeSingle(),
    // Only a session with a second factor (aal2) can have recovery codes, and only a backend that
    // has them (a preview hosted Supabase lacks): others skip the call.
    claims.aal === "aal2" ? recoveryCodesLeft(supabase, getSupabaseEnv(context).url) : null,
  ]);
  if (error) backendFailure(error);
  return dataNoStore({
    recoveryCodesLeft: codesLeft,
    email: claims.email ?? null,
    username: profile?.username ?? "",
    displayName: profile?.display_name ?? "",
    avatarPath: profile?.avatar_path ?? null,
    avatarResult: new URL(request.url).searchParams.get("avatar"),
  });
}

/** How many of the user's recovery codes are left; null without a set, or a backend without them. */
async function recoveryCodesLeft(supabase: SupabaseClient, backendUrl: string) {
  if ((await offersRecoveryCodes(supabase, backendUrl)) !== true) return null;
  const { data } = await supabase.auth.mfa.recoveryCodes.getStatus();
  return data ? data.remaining : null;
}

/**
 * Saves both fields into public.profiles in one update, as the user: what share partners see,
 * written where RLS checks the session (aal2 once the user has a factor). A taken username saves
 * nothing and shows beside the field. The display name then goes into the user's metadata as well,
 * for the header's initials (the token carries it): the user's own copy, which nothing shown to
 * anyone else reads. It is written when the name changed or the token's copy differs, so a copy
 * that failed to save is caught up by the next save.
 */
export async function action({ request, context }: Route.ActionArgs) {
  const { supabase, claims } = requireUser(request, context);
  const parsed = await parseForm(request, profileSchema);
  if (!parsed.ok) return formFailure(parsed);
  const { username, displayName } = parsed.data;
  const { data: current, error: readError } = await supabase
    .from("profiles")
    .select("username, display_name")
    .eq("id", claims.sub)
    .maybeSingle();
  if (readError) backendFailure(readError);
  const changes = {
    ...((current?.username ?? "") === username ? {} : { username: username || null }),
    ...((current?.display_name ?? "") === displayName ? {} : { display_name: displayName || null }),
  };
  if (Object.keys(changes).length > 0) {
    const { error } = await supabase.from("profiles").update(changes).eq("id", claims.sub);
    if (error?.code === "23505") {
      return formFailure(
        {
          errors: { fields: { username: "That username is taken. Try another one." } },
          values: parsed.values,
        },
        409,
      );
    }
    if (error?.code === "23514" && error.message.includes("profiles_username_format")) {
      return formFailure(
        { errors: { fields: { username: USERNAME_RULES } }, values: parsed.values },
        400,
      );
    }
    if (error) backendFailure(error);
  }
  if ("display_name" in changes || (toSessionUser(claims)?.displayName ?? "") !== displayName) {
    // (A refusal here leaves the header's initials as they were; the profile is saved.)
    await supabase.auth.updateUser({ data: { display_name: displayName || null } });
  }
  return dataNoStore({ ok: true as const });
}

export default function Profile({ loaderData, actionData }: Route.ComponentProps) {
  const formRef = useFocusFirstError(actionData);
  const failed = actionData && !actionData.ok ? actionData : undefined;
  const values = failed?.values ?? loaderData;
  return (
    <section className="w-full max-w-xl" aria-labelledby="profile-title">
      <h1 id="profile-title" className="text-2xl font-semibold tracking-tight">
        Profile
      </h1>
      <p className="mt-1 text-sm text-ink-600 dark:text-ink-400">
        How you appear to people you share notes with
        {loaderData.email ? (
          <>
            {" "}
            (signed in as <span className="font-medium">{loaderData.email}</span>)
          </>
        ) : null}
        .
      </p>
      {loaderData.recoveryCodesLeft !== null &&
      loaderData.recoveryCodesLeft <= FEW_RECOVERY_CODES ? (
        <div className="mt-4" data-testid="few-recovery-codes">
          <FormAlert>
            {loaderData.recoveryCodesLeft === 0
              ? "You have no recovery codes left."
              : `Only ${loaderData.recoveryCodesLeft} recovery ${loaderData.recoveryCodesLeft === 1 ? "code is" : "codes are"} left.`}{" "}
            <Link to="/account/security" className="font-medium underline">
              Make a new set
            </Link>{" "}
            so you can still sign in if you lose your phone.
          </FormAlert>
        </div>
      ) : null}
      <AvatarForm
        path={loaderData.avatarPath}
        name={loaderData.displayName || loaderData.username || loaderData.email || "?"}
        result={loaderData.avatarResult}
      />
      <Form
        method="post"
        noValidate
        ref={formRef}
        className="mt-6 space-y-5 rounded-2xl border border-ink-200 bg-white p-6 shadow-sm sm:p-8 dark:border-ink-800 dark:bg-ink-800/40"
        data-testid="profile-form"
      >
        {actionData?.ok ? <FormAlert tone="success">Your profile was saved.</FormAlert> : null}
        {failed?.errors.form ? (
          <FormAlert code={failed.errors.code}>{failed.errors.form}</FormAlert>
        ) : null}
        <FormField
          label="Username"
          name="username"
          type="text"
          autoComplete="username"
          autoCapitalize="none"
          spellCheck={false}
          maxLength={30}
          defaultValue={values.username}
          error={failed?.errors.fields.username}
          hint={USERNAME_RULES}
        />
        <FormField
          label="Display name"
          name="displayName"
          type="text"
          autoComplete="nickname"
          maxLength={DISPLAY_NAME_MAX}
          defaultValue={values.displayName}
          error={failed?.errors.fields.displayName}
          hint="Shown on notes you share instead of your email. Leave empty to show your username."
        />
        <SubmitButton className="w-auto! px-6">Save profile</SubmitButton>
      </Form>
    </section>
  );
}
