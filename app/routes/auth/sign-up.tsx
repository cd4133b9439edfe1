import { Form } from "react-router";
import { AuthCard, FooterLink } from "../../components/auth-card";
import { FormAlert } from "../../components/form-alert";
import { FormField } from "../../components/form-field";
import { SubmitButton } from "../../components/submit-button";
import { getAuth } from "../../lib/auth.server";
import { authFailure, formFailure } from "../../lib/form-results.server";
import { parseForm } from "../../lib/forms.server";
import { redirectNoStore } from "../../lib/http.server";
import { withNext } from "../../lib/next-path";
import { useFocusFirstError } from "../../lib/use-focus-first-error";
import type { Route } from "./+types/sign-up";
import { EmailField, NewPasswordField } from "./parts/auth-fields";
import { callbackUrl, redirectToNext, requireSignedOut } from "./parts/redirects.server";
import { signUpSchema } from "./parts/schemas.server";

export const meta: Route.MetaFunction = () => [{ title: "Create an account · Edge Notes" }];

export function loader({ request, context }: Route.LoaderArgs) {
  const next = requireSignedOut(request, context);
  return { next };
}

export async function action({ request, context }: Route.ActionArgs) {
  const parsed = await parseForm(request, signUpSchema);
  if (!parsed.ok) return formFailure(parsed);
  const { email, password, displayName, next } = parsed.data;
  const { data, error } = await getAuth(context).supabase.auth.signUp({
    email,
    password,
    options: {
      data: displayName ? { display_name: displayName } : undefined,
      emailRedirectTo: callbackUrl(request, next),
    },
  });
  if (error) return authFailure(error, parsed.values);
  // Confirmations off: signed in at once. On: check the inbox (the same page whether or not the
  // address already had an account, as the server's answer is the same).
  if (data.session) return redirectToNext(next);
  return redirectNoStore(withNext("/sign-up/check-email", next, { email }));
}

export default function SignUp({ loaderData, actionData }: Route.ComponentProps) {
  const formRef = useFocusFirstError(actionData);
  const errors = actionData?.errors;
  const values = actionData?.values ?? {};
  const { next } = loaderData;
  return (
    <AuthCard
      title="Create an account"
      intro="Your notes, on every device. It takes a minute."
      footer={
        <FooterLink to={withNext("/sign-in", next)} prompt="Already have an account?">
          Sign in
        </FooterLink>
      }
    >
      <Form method="post" noValidate ref={formRef} className="space-y-4">
        <input type="hidden" name="next" value={next ?? ""} />
        {errors?.form ? <FormAlert code={errors.code}>{errors.form}</FormAlert> : null}
        <FormField
          label="Display name"
          name="displayName"
          type="text"
          autoComplete="nickname"
          maxLength={100}
          defaultValue={values.displayName}
          error={errors?.fields.displayName}
          hint="Optional. Shown on your notes instead of your email."
        />
        <EmailField autoComplete="email" defaultValue={values.email} error={errors?.fields.email} />
        <NewPasswordField error={errors?.fields.password} />
        <SubmitButton>Sign up</SubmitButton>
      </Form>
    </AuthCard>
  );
}
