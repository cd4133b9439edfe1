import { Link } from "react-router";
import { FooterLink, linkClass } from "../../components/auth-card";
import { noStoreHeaders } from "../../lib/http.server";
import { withNext } from "../../lib/next-path";
import type { Route } from "./+types/sign-in.check-email";
import { CheckInbox } from "./parts/check-inbox";
import { emailFromUrl, resendAction, sendSignInEmail } from "./parts/emails.server";
import { requireSignedOut } from "./parts/redirects.server";

/** The page names the visitor's address or session: never kept by a shared cache. */
export const headers: Route.HeadersFunction = noStoreHeaders;

export const meta: Route.MetaFunction = () => [{ title: "Check your inbox · Edge Notes" }];

export function loader({ request, context }: Route.LoaderArgs) {
  const next = requireSignedOut(request, context);
  return { email: emailFromUrl(request), next };
}

/** Resend the magic link. */
export const action = resendAction(sendSignInEmail, (email) => `We sent a new link to ${email}.`);

export default function SignInCheckEmail({ loaderData, actionData }: Route.ComponentProps) {
  const { email, next } = loaderData;
  return (
    <CheckInbox
      email={email}
      next={next}
      answer={actionData}
      footer={<FooterLink to={withNext("/sign-in", next)}>Back to sign in</FooterLink>}
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
