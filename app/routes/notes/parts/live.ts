import { useRouteLoaderData } from "react-router";
import type { Viewer } from "../../../lib/live.client";
import type { SessionUser } from "../../../lib/session-user";
import { useLiveRevalidation } from "../../../lib/use-live";

/**
 * The topics the database broadcasts notes' changes on (supabase/migrations/
 * 20261128000100_live_notes.sql): `user:<id>` when a note in the user's lists changes,
 * `note:<id>` when the note itself does. Messages carry ids only; pages re-read.
 */

function useUserTopic(): string | null {
  const root = useRouteLoaderData("root") as { user?: SessionUser | null } | undefined;
  return root?.user ? `user:${root.user.id}` : null;
}

/**
 * A page showing the user's lists (theirs, archived, shared with them) re-reads when they change,
 * and when the owner of a note shared with the user changes the name or picture its card shows
 * (`profile`: supabase/migrations/20261128012000_profile_names_live_for_readers.sql).
 */
export function useLiveLists() {
  useLiveRevalidation(useUserTopic());
}

/**
 * A note's page re-reads when the note changes (an edit, a pin, its shares), when the user's
 * lists say so about this note (shared with them again, or no longer), and when the user's own
 * profile, or that of the owner of a note they read, changes (`profile`:
 * supabase/migrations/20261128003800_live_profile_names.sql); it
 * shares the reader's presence on the note (the name and picture it read), and returns the others
 * reading it.
 */
export function useLiveNote(noteId: string, me: Viewer): Viewer[] {
  useLiveRevalidation(useUserTopic(), {
    relevant: (payload) => payload.note_id === noteId || payload.user_id !== undefined,
  });
  return useLiveRevalidation(`note:${noteId}`, { presence: me });
}
