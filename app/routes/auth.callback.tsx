import { LinkNotice, LinkProblemView } from "../components/link-problem";
import { getAuth } from "../lib/auth.server";
import { redirectToNext } from "../lib/auth-redirects.server";
import {
  EMAIL_CHANGE_HALF_DONE,
  linkNoticeResponse,
  linkProblemResponse,
} from "../lib/link-landing.server";
import type { Route } from "./+types/auth.callback";

export const meta: Route.MetaFunction = () => [{ title: "Signing in · Edge Notes" }];

/**
 * Where PKCE flows come back: email links sent through the auth server's /verify (sign-up
 * confirmation, magic link, recovery, email change) and OAuth providers, as `?code=`. The code is
 * exchanged with the verifier cookie this browser stored when it asked; the session's cookies
 * ride on the redirect to `next`.
 */
export async function loader({ request, context }: Route.LoaderArgs) {
  const { supabase, claims } = getAuth(context);
  const params = new URL(request.url).searchParams;
  const next = params.get("next");
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
  return redirectToNext(next);
}

export default function AuthCallback({ loaderData }: Route.ComponentProps) {
  if (loaderData.kind === "notice") {
    return <LinkNotice title="Almost done" message={loaderData.message} />;
  }
  return <LinkProblemView page={loaderData.page} code={loaderData.code} />;
}
