import { getAuth } from "../../lib/auth.server";
import { safeNext } from "../../lib/safe-redirect";
import type { Route } from "./+types/callback";
import { afterSignIn } from "./parts/after-sign-in.server";
import {
  EMAIL_CHANGE_HALF_DONE,
  linkNoticeResponse,
  linkProblemResponse,
} from "./parts/link-landing.server";
import { LinkNotice, LinkProblemView } from "./parts/link-problem";

export const meta: Route.MetaFunction = () => [{ title: "Signing in · Edge Notes" }];

/**
 * Where PKCE flows come back: email links sent through the auth server's /verify (sign-up
 * confirmation, magic link, recovery, email change) and OAuth providers (sign-in, or linking a
 * provider from /account/identities), as `?code=`. The code is exchanged with the verifier cookie
 * this browser stored when it asked; the session's cookies ride on the redirect to `next` (or
 * to the second-factor challenge first).
 *
 * Unlike /auth/confirm this may change state on GET: the exchange needs the verifier cookie that
 * only the browser which asked for the link holds, so neither a mail scanner nor another site
 * can sign a browser in with it (login CSRF), and the code is useless to anyone who copies it.
 */
export async function loader({ request, context }: Route.LoaderArgs) {
  const { supabase, claims } = getAuth(context);
  const params = new URL(request.url).searchParams;
  const next = safeNext(params.get("next"));
  const errorCode = params.get("error_code") ?? params.get("error") ?? undefined;
  const kind = next === "/reset-password" ? "recovery" : "sign-in";
  if (errorCode) return linkProblemResponse(errorCode, { signedIn: !!claims, kind });

  const code = params.get("code");
  if (!code) {
    // The first of two email-change links (both addresses must confirm); the text is ours.
    if (params.get("message")) return linkNoticeResponse(EMAIL_CHANGE_HALF_DONE);
    return linkProblemResponse(undefined, { signedIn: !!claims, kind });
  }
  if (code.length > 512) return linkProblemResponse(undefined, { signedIn: !!claims, kind });

  const flowId = params.get("sb_flow_id");
  const { error } = await supabase.auth.exchangeCodeForSession(
    code,
    flowId ? { flowId } : undefined,
  );
  if (error) return linkProblemResponse(error.code, { signedIn: !!claims, kind });
  return afterSignIn(supabase, { next });
}

export default function AuthCallback({ loaderData }: Route.ComponentProps) {
  if (loaderData.kind === "notice") {
    return <LinkNotice title="Almost done" message={loaderData.message} />;
  }
  return <LinkProblemView page={loaderData.page} code={loaderData.code} />;
}
