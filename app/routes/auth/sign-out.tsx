import { Form, Link } from "react-router";
import { AuthCard, FooterLink } from "../../components/auth-card";
import { FormAlert } from "../../components/form-alert";
import { SubmitButton } from "../../components/submit-button";
import { getAuth } from "../../lib/auth.server";
import { authFailure } from "../../lib/form-results.server";
import { readFormValues } from "../../lib/forms.server";
import { noStoreHeaders, redirectNoStore } from "../../lib/http.server";
import type { Route } from "./+types/sign-out";

/** The page names the visitor's address or session: never kept by a shared cache. */
export const headers: Route.HeadersFunction = noStoreHeaders;

export const meta: Route.MetaFunction = () => [{ title: "Sign out · Edge Notes" }];

/** A GET never signs anyone out (links can be prefetched or forged); it shows the buttons. */
export function loader({ context }: Route.LoaderArgs) {
  const { claims } = getAuth(context);
  return { email: (claims?.email as string | undefined) ?? null, signedIn: !!claims };
}

/**
 * POST: sign out this device (`scope: local`, the default) or every device (`global`). The
 * session cookies are cleared on the redirect, which is private, no-store.
 */
export async function action({ request, context }: Route.ActionArgs) {
  const { supabase, claims } = getAuth(context);
  const { scope } = await readFormValues(request);
  if (!claims) return redirectNoStore("/");
  const global = scope === "global";
  const { error } = await supabase.auth.signOut({ scope: global ? "global" : "local" });
  if (error) return authFailure(error, {});
  return redirectNoStore("/");
}

export default function SignOut({ loaderData, actionData }: Route.ComponentProps) {
  if (!loaderData.signedIn) {
    return (
      <AuthCard
        title="You are signed out"
        footer={<FooterLink to="/">Go to the home page</FooterLink>}
      >
        <Link
          to="/sign-in"
          className="inline-flex w-full items-center justify-center rounded-lg bg-brand-600 px-4 py-2.5 text-sm font-medium text-white hover:bg-brand-700"
        >
          Sign in
        </Link>
      </AuthCard>
    );
  }
  return (
    <AuthCard
      title="Sign out"
      intro={
        <>
          You are signed in as{" "}
          <strong className="font-medium text-ink-800 dark:text-ink-100">
            {loaderData.email ?? "your account"}
          </strong>
          .
        </>
      }
    >
      <div className="space-y-3">
        {actionData?.errors?.form ? (
          <FormAlert code={actionData.errors.code}>{actionData.errors.form}</FormAlert>
        ) : null}
        <Form method="post">
          <input type="hidden" name="scope" value="local" />
          <SubmitButton intent="local">Sign out</SubmitButton>
        </Form>
        <Form method="post">
          <input type="hidden" name="scope" value="global" />
          <SubmitButton intent="global" variant="secondary">
            Sign out everywhere
          </SubmitButton>
        </Form>
        <p className="text-xs text-ink-600 dark:text-ink-400">
          "Sign out everywhere" ends your sessions on every device and browser.
        </p>
      </div>
    </AuthCard>
  );
}
