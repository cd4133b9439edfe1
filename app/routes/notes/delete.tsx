import { Form, Link } from "react-router";
import { SubmitButton } from "../../components/submit-button";
import { requireUser } from "../../lib/guards.server";
import { backendFailure, notFound, redirectNoStore } from "../../lib/http.server";
import { accessToken, storageCalls } from "../../lib/storage.server";
import { getSupabaseEnv } from "../../lib/worker-context.server";
import type { Route } from "./+types/delete";
import { sweepOrphans } from "./parts/attachments.server";
import { loadNote, parseNoteId } from "./parts/data.server";
import { BackLink, NotePage } from "./parts/note-form";

export const meta: Route.MetaFunction = () => [{ title: "Delete note · Edge Notes" }];

/** The confirmation step: works without JavaScript, and nothing is deleted by a GET. */
export async function loader({ request, context, params }: Route.LoaderArgs) {
  const { supabase, claims } = requireUser(request, context);
  const note = await loadNote(supabase, parseNoteId(params.id));
  if (note.owner_id !== claims.sub) notFound();
  return { note: { id: note.id, title: note.title } };
}

export async function action({ request, context, params }: Route.ActionArgs) {
  const { supabase, claims } = requireUser(request, context);
  const id = parseNoteId(params.id);
  const token = await accessToken(supabase);
  // The note first (its attachment rows go with it), then its files through the Storage API
  // (Storage forbids deleting objects in SQL); the sweep also removes what an earlier failure
  // between the two left behind (decision 033).
  const { data: rows, error } = await supabase.from("notes").delete().eq("id", id).select("id");
  if (error) backendFailure(error);
  if (rows.length === 0) notFound();
  if (token) await sweepOrphans(supabase, storageCalls(getSupabaseEnv(context), token), claims.sub);
  return redirectNoStore("/notes?deleted=1", 302);
}

export default function DeleteNote({ loaderData }: Route.ComponentProps) {
  const { note } = loaderData;
  return (
    <NotePage>
      <BackLink to={`/notes/${note.id}`}>Back to the note</BackLink>
      <section
        aria-labelledby="delete-title"
        className="mt-6 rounded-2xl border border-red-200 bg-white p-6 shadow-sm sm:p-8 dark:border-red-900 dark:bg-ink-800/40"
      >
        <h1 id="delete-title" className="text-2xl font-semibold tracking-tight break-words">
          {`Delete “${note.title}”?`}
        </h1>
        <p className="mt-2 text-sm text-ink-600 dark:text-ink-400">
          The note, its tags, its shares and its attachments are deleted for good. This cannot be
          undone. To keep it out of your list instead, archive it.
        </p>
        <Form method="post" className="mt-6 flex flex-wrap items-center gap-3">
          <SubmitButton className="w-auto! bg-red-600! px-6 hover:bg-red-700!">
            Delete note
          </SubmitButton>
          <Link
            to={`/notes/${note.id}`}
            className="rounded-lg px-4 py-2.5 text-sm font-medium text-ink-600 hover:bg-ink-100 dark:text-ink-400 dark:hover:bg-ink-800"
          >
            Cancel
          </Link>
        </Form>
      </section>
    </NotePage>
  );
}
