import { Form } from "react-router";
import { AuthCard, FooterLink } from "../../components/auth-card";
import { SubmitButton } from "../../components/submit-button";
import { getAuth } from "../../lib/auth.server";
import { readFormValues } from "../../lib/forms.server";
import { dataNoStore, noStoreHeaders } from "../../lib/http.server";
import { appPath } from "../../lib/safe-redirect";
import type { Route } from "./+types/confirm";
import { afterSignIn } from "./parts/after-sign-in.server";
import {
  EMAIL_CHANGE_HALF_DONE,
  linkNoticeResponse,
  linkProblemResponse,
} from "./parts/link-landing.server";
import { LinkNotice, LinkProblemView } from "./parts/link-problem";
import { type EmailLinkType, emailLinkSchema } from "./parts/schemas.server";

/** The page carries a one-time token in its URL and form: never kept by any cache. */
export const headers: Route.HeadersFunction = noStoreHeaders;

export const meta: Route.MetaFunction = () => [{ title: "Confirm · Edge Notes" }];

/** What the page says for each kind of link, and the one button that uses it. */
const COPY: Record<EmailLinkType, { title: string; intro: string; button: string }> = {
  signup: {
    title: "Confirm your email address",
    intro: "Press the button to confirm this address and sign in.",
    button: "Confirm",
  },
  invite: {
    title: "Accept your invitation",
    intro: "Press the button to accept the invitation and sign in.",
    button: "Confirm",
  },
  email_change: {
    title: "Confirm your new email address",
    intro: "Press the button to confirm the change of your email address.",
    button: "Confirm",
  },
  magiclink: {
    title: "Sign in to Edge Notes",
    intro: "Press the button to finish signing in.",
    button: "Sign in",
  },
  email: {
    title: "Sign in to Edge Notes",
    intro: "Press the button to finish signing in.",
    button: "Sign in",
  },
  recovery: {
    title: "Reset your password",
    intro: "Press the button to choose a new password.",
    button: "Continue to reset your password",
  },
};

/**
 * Email links that carry a token hash (templates such as
 * `{{ .SiteURL }}/auth/confirm?token_hash={{ .TokenHash }}&type=signup`), verified on the server
 * with verifyOtp, so they work in any browser, with no PKCE verifier needed.
 *
 * Opening the link (GET) changes nothing: it shows one button in a plain form, and only pressing
 * it (POST) uses the token. So a mail scanner that fetches links does not burn it, and another
 * site cannot sign a visitor into the link's account by making them open it (login CSRF): a
 * cross-origin POST is refused by the Worker's origin check before any route code runs.
 */
export function loader({ request, context }: Route.LoaderArgs) {
  const { claims } = getAuth(context);
  const params = new URL(request.url).searchParams;
  const kind = params.get("type") === "recovery" ? "recovery" : "sign-in";
  const link = emailLinkSchema.safeParse({
    token_hash: params.get("token_hash") ?? undefined,
    type: params.get("type") ?? undefined,
    next: params.get("next") ?? undefined,
  });
  if (!link.success) return linkProblemResponse(undefined, { signedIn: !!claims, kind });
  const { token_hash: tokenHash, type, next } = link.data;
  return dataNoStore({ kind: "confirm" as const, tokenHash, type, next: next ?? "" });
}

export async function action({ request, context }: Route.ActionArgs) {
  const { supabase, claims } = getAuth(context);
  const form = await readFormValues(request);
  const kind = form.type === "recovery" ? "recovery" : "sign-in";
  const link = emailLinkSchema.safeParse(form);
  if (!link.success) return linkProblemResponse(undefined, { signedIn: !!claims, kind });
  const { token_hash, type, next } = link.data;
  const { data: verified, error } = await supabase.auth.verifyOtp({ token_hash, type });
  if (error) return linkProblemResponse(error.code, { signedIn: !!claims, kind });
  if (!verified.session) return linkNoticeResponse(EMAIL_CHANGE_HALF_DONE);
  if (type === "email_change") {
    return afterSignIn(supabase, { next, fallback: appPath("/account/email") });
  }
  if (type === "recovery") {
    return afterSignIn(supabase, { next: appPath("/reset-password") });
  }
  return afterSignIn(supabase, { next });
}

export default function AuthConfirm({ loaderData, actionData }: Route.ComponentProps) {
  const answer = actionData ?? loaderData;
  if (answer.kind === "notice") {
    return <LinkNotice title="Almost done" message={answer.message} />;
  }
  if (answer.kind === "problem") {
    return <LinkProblemView page={answer.page} code={answer.code} />;
  }
  const copy = COPY[answer.type];
  return (
    <div data-testid="confirm-link">
      <AuthCard
        title={copy.title}
        intro={copy.intro}
        footer={<FooterLink to="/">Go to the home page</FooterLink>}
      >
        {/* Posts to this same URL: after the action, the loader (which needs the link's
            parameters) runs again for the page, so the answer's status is the action's. */}
        <Form method="post" data-testid="confirm-form">
          <input type="hidden" name="token_hash" value={answer.tokenHash} />
          <input type="hidden" name="type" value={answer.type} />
          <input type="hidden" name="next" value={answer.next} />
          <SubmitButton>{copy.button}</SubmitButton>
        </Form>
        <p className="mt-4 text-xs text-ink-600 dark:text-ink-400">
          The link works once. Opening it does nothing until you press the button, so programs that
          check links in your email can't use it up.
        </p>
      </AuthCard>
    </div>
  );
}
