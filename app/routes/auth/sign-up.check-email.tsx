import { Link } from "react-router";
import { linkClass } from "../../components/auth-card";
import { CheckInbox } from "../../components/check-inbox";
import { getAuth } from "../../lib/auth.server";
import { authFailure, formFailure, formNotice, parseForm } from "../../lib/forms.server";
import { noStoreHeaders } from "../../lib/http.server";
import { withNext } from "../../lib/next-path";
import type { Route } from "./+types/sign-up.check-email";
import { resendConfirmation } from "./emails.server";
import { nextFromUrl } from "./redirects.server";
import { emailOnlySchema } from "./schemas.server";

/** The page names the visitor's address or session: never kept by a shared cache. */
export const headers: Route.HeadersFunction = noStoreHeaders;

export const meta: Route.MetaFunction = () => [{ title: "Confirm your email · Edge Notes" }];

export function loader({ request }: Route.LoaderArgs) {
  const email = new URL(request.url).searchParams.get("email")?.slice(0, 255) ?? "";
  return { email, next: nextFromUrl(request) };
}

/** Resend the confirmation email. */
export async function action({ request, context }: Route.ActionArgs) {
  const parsed = await parseForm(request, emailOnlySchema);
  if (!parsed.ok) return formFailure(parsed);
  const { email, next } = parsed.data;
  const error = await resendConfirmation(getAuth(context).supabase, request, email, next);
  if (error) return authFailure(error, parsed.values);
  return formNotice(`We sent the confirmation email to ${email} again.`);
}

export default function SignUpCheckEmail({ loaderData, actionData }: Route.ComponentProps) {
  const { email, next } = loaderData;
  return (
    <CheckInbox
      title="Check your inbox"
      email={email}
      next={next}
      answer={actionData}
      footer={
        <>
          Confirmed already?{" "}
          <Link to={withNext("/sign-in", next)} className={linkClass}>
            Sign in
          </Link>
        </>
      }
    >
      <p>
        We sent a confirmation link to{" "}
        <strong className="font-medium text-ink-800 dark:text-ink-100">
          {email || "your email address"}
        </strong>
        . Open it in this browser to finish creating your account.
      </p>
    </CheckInbox>
  );
}
