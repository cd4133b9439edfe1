import { redirectNoStore } from "../../../lib/http.server";
import type { SafePath } from "../../../lib/safe-redirect";

/** After a form post without JavaScript: back to the page it came from (a notes page only). */
export function redirectBack(returnTo: SafePath | undefined, fallback: string): Response {
  const path = returnTo?.startsWith("/notes") ? returnTo : fallback;
  return redirectNoStore(path, 302);
}
