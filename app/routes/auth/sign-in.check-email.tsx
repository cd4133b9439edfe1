import { Link } from "react-router";
import { linkClass } from "../../components/auth-card";
import { CheckInbox } from "../../components/check-inbox";
import { getAuth } from "../../lib/auth.server";
import { authFailure, formFailure, formNotice, parseForm } from "../../lib/forms.server";
import { noStoreHeaders } from "../../lib/http.server";
import { withNext } from "../../lib/next-path";
import type { Route } from "./+types/sign-in.check-email";
import { sendSignInEmail } from "./emails.server";
import { nextFromUrl, redirectToNext } from "./redirects.server";
import { emailOnlySchema } from "./schemas.server";

/** The page names the visitor's address or session: never kept by a shared cache. */
export const headers: Route.HeadersFunction = noStoreHeaders;

export const meta: Route.MetaFunction = () => [{ title: "Check your inbox · Edge Notes" }];

export function loader({ request, context }: Route.LoaderArgs) {
  const next = nextFromUrl(request);
  if (getAuth(context).claims) throw redirectToNext(next);
  const email = new URL(request.url).searchParams.get("email")?.slice(0, 255) ?? "";
  return { email, next };
}

/** Resend the magic link. */
export async function action({ request, context }: Route.ActionArgs) {
  const parsed = await parseForm(request, emailOnlySchema);
  if (!parsed.ok) return formFailure(parsed);
  const { email, next } = parsed.data;
  const error = await sendSignInEmail(getAuth(context).supabase, request, email, next);
  if (error) return authFailure(error, parsed.values);
  return formNotice(`We sent a new link to ${email}.`);
}

export default function SignInCheckEmail({ loaderData, actionData }: Route.ComponentProps) {
  const { email, next } = loaderData;
  return (
    <CheckInbox
      title="Check your inbox"
      email={email}
      next={next}
      answer={actionData}
      footer={
        <Link to={withNext("/sign-in", next)} className={linkClass}>
          Back to sign in
        </Link>
      }
    >
      <p>
        If{" "}
        <strong className="font-medium text-ink-800 dark:text-ink-100">
          {email || "your address"}
        </strong>{" "}
        has an account, we emailed it a sign-in link. Open it in this browser to sign in; it works
        once and expires in an hour.
      </p>
      <p>
        Got a 6-digit code instead?{" "}
        <Link to={withNext("/sign-in/code", next, email ? { email } : {})} className={linkClass}>
          Enter the code
        </Link>
        .
      </p>
    </CheckInbox>
  );
}
