import { FooterLink } from "../../components/auth-card";
import { noStoreHeaders } from "../../lib/http.server";
import { withNext } from "../../lib/next-path";
import type { Route } from "./+types/sign-up.check-email";
import { CheckInbox } from "./parts/check-inbox";
import { emailFromUrl, resendAction, resendConfirmation } from "./parts/emails.server";
import { nextFromUrl } from "./parts/redirects.server";

/** The page names the visitor's address or session: never kept by a shared cache. */
export const headers: Route.HeadersFunction = noStoreHeaders;

export const meta: Route.MetaFunction = () => [{ title: "Confirm your email · Edge Notes" }];

export function loader({ request }: Route.LoaderArgs) {
  return { email: emailFromUrl(request), next: nextFromUrl(request) };
}

/** Resend the confirmation email. */
export const action = resendAction(
  resendConfirmation,
  (email) => `We sent the confirmation email to ${email} again.`,
);

export default function SignUpCheckEmail({ loaderData, actionData }: Route.ComponentProps) {
  const { email, next } = loaderData;
  return (
    <CheckInbox
      email={email}
      next={next}
      answer={actionData}
      footer={
        <FooterLink to={withNext("/sign-in", next)} prompt="Confirmed already?">
          Sign in
        </FooterLink>
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
