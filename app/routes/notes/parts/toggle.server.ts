import { data } from "react-router";
import type { Auth } from "../../../lib/auth.server";
import { validateForm } from "../../../lib/forms.server";
import { dataNoStore, notFound } from "../../../lib/http.server";
import { toggleNote } from "./data.server";
import { redirectBack } from "./redirects.server";
import { toggleSchema } from "./schemas.server";

/**
 * Pin / unpin / archive / unarchive, posted from the list or the note page. Without JavaScript the
 * form posts and comes back to the page it was on (`returnTo`); with JavaScript a fetcher posts it
 * (`fetcher=1`), shows the change at once and gets data back, so the server's answer (and the
 * revalidated list) wins, including a 404 shown inline instead of replacing the page.
 */
export async function toggleAction(
  supabase: Auth["supabase"],
  id: string,
  values: Record<string, string>,
  fallback: string,
) {
  const parsed = validateForm(values, toggleSchema);
  if (!parsed.ok) return data({ ok: false as const, message: "Unknown action." }, { status: 400 });
  const { intent, returnTo, fetcher } = parsed.data;
  const note = await toggleNote(supabase, id, intent);
  if (!note) {
    if (!fetcher) notFound();
    return dataNoStore(
      { ok: false as const, message: "This note no longer exists." },
      { status: 404 },
    );
  }
  if (!fetcher) return redirectBack(returnTo, fallback);
  return dataNoStore({ ok: true as const, note });
}
