import type { EmailOtpType } from "@supabase/supabase-js";
import { LinkNotice, LinkProblemView } from "../components/link-problem";
import { afterSignIn } from "../lib/after-sign-in.server";
import { getAuth } from "../lib/auth.server";
import {
  EMAIL_CHANGE_HALF_DONE,
  linkNoticeResponse,
  linkProblemResponse,
} from "../lib/link-landing.server";
import { recordSecurityEvent } from "../lib/security-events.server";
import type { Route } from "./+types/auth.confirm";

export const meta: Route.MetaFunction = () => [{ title: "Confirming · Edge Notes" }];

const TYPES: readonly EmailOtpType[] = [
  "signup",
  "invite",
  "magiclink",
  "recovery",
  "email_change",
  "email",
];

/**
 * Email links that carry a token hash (templates such as
 * `{{ .SiteURL }}/auth/confirm?token_hash={{ .TokenHash }}&type=signup`): verified on the server
 * with verifyOtp, so they work in any browser, with no PKCE verifier needed.
 */
export async function loader({ request, context }: Route.LoaderArgs) {
  const { supabase, claims } = getAuth(context);
  const params = new URL(request.url).searchParams;
  const tokenHash = params.get("token_hash") ?? "";
  const type = params.get("type") as EmailOtpType;
  const next = params.get("next");
  const kind = type === "recovery" ? "recovery" : "sign-in";
  if (!tokenHash || tokenHash.length > 512 || !TYPES.includes(type)) {
    return linkProblemResponse(undefined, { signedIn: !!claims, kind });
  }
  const { data, error } = await supabase.auth.verifyOtp({ token_hash: tokenHash, type });
  if (error) return linkProblemResponse(error.code, { signedIn: !!claims, kind });
  if (!data.session) {
    return linkNoticeResponse(EMAIL_CHANGE_HALF_DONE);
  }
  if (type === "email_change") {
    await recordSecurityEvent(supabase, request, "email_changed", {
      email: data.user?.email ?? null,
    });
    return afterSignIn(supabase, request, { next, fallback: "/account/email", record: false });
  }
  if (type === "recovery") {
    return afterSignIn(supabase, request, { next: "/reset-password", method: "recovery" });
  }
  return afterSignIn(supabase, request, { next });
}

export default function AuthConfirm({ loaderData }: Route.ComponentProps) {
  if (loaderData.kind === "notice") {
    return <LinkNotice title="Almost done" message={loaderData.message} />;
  }
  return <LinkProblemView page={loaderData.page} code={loaderData.code} />;
}
