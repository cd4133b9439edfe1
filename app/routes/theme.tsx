import { readFormValues } from "../lib/forms.server";
import { redirectNoStore } from "../lib/http.server";
import { safeRedirectPath } from "../lib/safe-redirect";
import { parseTheme } from "../lib/theme";
import { themeCookie } from "../lib/theme.server";
import type { Route } from "./+types/theme";

/**
 * POST /theme (theme=system|light|dark, returnTo): remembers the choice in a cookie and goes
 * back to the page the form was on. A plain form post, so it works without JavaScript; an
 * unknown theme means "system".
 */
export async function action({ request }: Route.ActionArgs) {
  const form = await readFormValues(request);
  const response = redirectNoStore(safeRedirectPath(form.returnTo));
  const https = new URL(request.url).protocol === "https:";
  response.headers.append("Set-Cookie", themeCookie(parseTheme(form.theme), https));
  return response;
}

/** Nothing to show: a visit to /theme goes home. */
export function loader() {
  return redirectNoStore("/");
}
