import { Form, Link, useNavigation } from "react-router";
import { AuthCard, FooterLink, linkClass } from "../../components/auth-card";
import { FormAlert } from "../../components/form-alert";
import { FormField } from "../../components/form-field";
import { SubmitButton } from "../../components/submit-button";
import { getAuth } from "../../lib/auth.server";
import { authFailure, formFailure } from "../../lib/form-results.server";
import { readFormValues, validateForm } from "../../lib/forms.server";
import { redirectNoStore } from "../../lib/http.server";
import { withNext } from "../../lib/next-path";
import { safeNext } from "../../lib/safe-redirect";
import { useFocusFirstError } from "../../lib/use-focus-first-error";
import type { Route } from "./+types/sign-in";
import { afterSignIn } from "./parts/after-sign-in.server";
import { EmailField } from "./parts/auth-fields";
import { Divider } from "./parts/divider";
import { resendConfirmation, sendSignInEmail } from "./parts/emails.server";
import { isOAuthProvider, OAUTH_PROVIDERS, type OAuthProvider } from "./parts/oauth-providers";
import { PasskeySignIn } from "./parts/passkey-sign-in";
import { callbackUrl, requireSignedOut } from "./parts/redirects.server";
import { emailOnlySchema, signInSchema } from "./parts/schemas.server";

export const meta: Route.MetaFunction = () => [{ title: "Sign in · Edge Notes" }];

export function loader({ request, context }: Route.LoaderArgs) {
  const next = requireSignedOut(request, context);
  // Sent here because the session was ended (signed out everywhere, or from another device).
  const ended = new URL(request.url).searchParams.get("ended") === "1";
  return { next, ended };
}

export async function action({ request, context }: Route.ActionArgs) {
  const { supabase } = getAuth(context);
  const form = await readFormValues(request);
  switch (form.intent) {
    case "code":
    case "magic-link":
    case "resend-confirmation": {
      const parsed = validateForm(form, emailOnlySchema);
      if (!parsed.ok) return formFailure(parsed);
      const { email, next } = parsed.data;
      if (form.intent === "resend-confirmation") {
        const error = await resendConfirmation(supabase, request, email, next);
        if (error) return authFailure(error, parsed.values, { unconfirmed: true });
        return redirectNoStore(withNext("/sign-up/check-email", next, { email }));
      }
      const error = await sendSignInEmail(supabase, request, email, next);
      if (error) return authFailure(error, parsed.values);
      const page = form.intent === "code" ? "/sign-in/code" : "/sign-in/check-email";
      return redirectNoStore(withNext(page, next, { email }));
    }
    case "oauth": {
      const provider = form.provider;
      if (!isOAuthProvider(provider)) {
        return formFailure({
          errors: { fields: {}, form: "Choose one of the sign-in providers on this page." },
          values: {},
        });
      }
      const { data, error } = await supabase.auth.signInWithOAuth({
        provider,
        options: {
          redirectTo: callbackUrl(request, safeNext(form.next)),
          skipBrowserRedirect: true,
        },
      });
      if (error || !data.url) {
        return formFailure(
          {
            errors: {
              fields: {},
              form: `Signing in with ${OAUTH_PROVIDERS[provider]} is not available right now.`,
              code: error?.code ?? "unexpected",
            },
            values: {},
          },
          error?.status && error.status < 500 ? error.status : 503,
        );
      }
      return redirectNoStore(data.url);
    }
    default: {
      const parsed = validateForm(form, signInSchema);
      if (!parsed.ok) return formFailure(parsed);
      const { email, password, next } = parsed.data;
      const { error } = await supabase.auth.signInWithPassword({ email, password });
      if (error) {
        return authFailure(error, parsed.values, {
          unconfirmed: error.code === "email_not_confirmed",
        });
      }
      return afterSignIn(supabase, { next });
    }
  }
}

export default function SignIn({ loaderData, actionData }: Route.ComponentProps) {
  const formRef = useFocusFirstError(actionData);
  const errors = actionData?.errors;
  const values = actionData?.values ?? {};
  const { next } = loaderData;
  return (
    <AuthCard
      title="Sign in"
      intro="Welcome back. Sign in with your password, or have us email you a code or a link."
      footer={
        <FooterLink to={withNext("/sign-up", next)} prompt="New to Edge Notes?">
          Create an account
        </FooterLink>
      }
    >
      <Form method="post" noValidate ref={formRef} className="space-y-4">
        <input type="hidden" name="next" value={next ?? ""} />
        {loaderData.ended && !errors ? (
          <FormAlert tone="success">
            <span data-testid="session-ended">Your session was ended. Sign in again.</span>
          </FormAlert>
        ) : null}
        {errors?.form ? (
          <FormAlert code={errors.code}>
            <p>{errors.form}</p>
            {actionData?.unconfirmed ? (
              <SubmitButton intent="resend-confirmation" variant="link" className="mt-1">
                Resend
              </SubmitButton>
            ) : null}
          </FormAlert>
        ) : null}
        <EmailField
          autoComplete="username webauthn"
          defaultValue={values.email}
          error={errors?.fields.email}
        />
        <FormField
          label="Password"
          name="password"
          type="password"
          autoComplete="current-password"
          required
          error={errors?.fields.password}
          aside={
            <Link to="/forgot-password" className={`text-sm ${linkClass}`}>
              Forgot password?
            </Link>
          }
        />
        <SubmitButton intent="password">Sign in</SubmitButton>
        <Divider>or get an email instead</Divider>
        <div className="grid gap-3">
          <SubmitButton intent="code" variant="secondary">
            Email me a code
          </SubmitButton>
          <SubmitButton intent="magic-link" variant="secondary">
            Email me a magic link
          </SubmitButton>
        </div>
      </Form>
      <PasskeySignIn next={next ?? undefined} />
      <Divider>or continue with</Divider>
      <Form method="post" className="grid gap-3 sm:grid-cols-2">
        <input type="hidden" name="intent" value="oauth" />
        <input type="hidden" name="next" value={next ?? ""} />
        {(Object.keys(OAUTH_PROVIDERS) as OAuthProvider[]).map((provider) => (
          <ProviderButton key={provider} provider={provider} />
        ))}
      </Form>
    </AuthCard>
  );
}

function ProviderButton({ provider }: { provider: OAuthProvider }) {
  const navigation = useNavigation();
  const submitting = navigation.state === "submitting";
  const mine = submitting && navigation.formData?.get("provider") === provider;
  return (
    <button
      type="submit"
      name="provider"
      value={provider}
      disabled={submitting}
      aria-busy={mine || undefined}
      className="inline-flex w-full items-center justify-center gap-2 rounded-lg border border-ink-200 bg-white px-4 py-2.5 text-sm font-medium text-ink-800 transition-colors hover:bg-ink-50 disabled:cursor-not-allowed disabled:opacity-60 dark:border-ink-600 dark:bg-ink-800 dark:text-ink-50"
    >
      {`Continue with ${OAUTH_PROVIDERS[provider]}`}
    </button>
  );
}
