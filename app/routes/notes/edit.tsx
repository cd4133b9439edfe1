import { formFailure } from "../../lib/form-results.server";
import { readFormValues, validateForm } from "../../lib/forms.server";
import { requireUser } from "../../lib/guards.server";
import { notFound, redirectNoStore } from "../../lib/http.server";
import type { Route } from "./+types/edit";
import { loadNote, parseNoteId, setNoteTags } from "./parts/data.server";
import { BackLink, NoteForm, NotePage } from "./parts/note-form";
import { NOTE_FORM, previewDraft, saveFailure } from "./parts/save.server";
import { noteSchema } from "./parts/schemas.server";

export const meta: Route.MetaFunction = ({ loaderData }) => [
  { title: `Edit ${loaderData?.note.title ?? "note"} · Edge Notes` },
];

export async function loader({ request, context, params }: Route.LoaderArgs) {
  const { supabase, claims } = requireUser(request, context);
  const note = await loadNote(supabase, parseNoteId(params.id));
  // A note shared with this user is theirs to read, not to edit: the same 404 as any other.
  if (note.owner_id !== claims.sub) notFound();
  return { note };
}

export async function action({ request, context, params }: Route.ActionArgs) {
  const { supabase } = requireUser(request, context);
  const id = parseNoteId(params.id);
  const values = await readFormValues(request, NOTE_FORM);
  if (values.intent === "preview") return previewDraft(values);
  const parsed = validateForm(values, noteSchema, NOTE_FORM);
  if (!parsed.ok) return formFailure(parsed);
  const { title, body, tags } = parsed.data;
  const { data: rows, error } = await supabase
    .from("notes")
    .update({ title, body })
    .eq("id", id)
    .select("id");
  if (error) return saveFailure(error, parsed.values);
  if (rows.length === 0) notFound();
  await setNoteTags(supabase, id, tags);
  return redirectNoStore(`/notes/${id}`, 302);
}

export default function EditNote({ loaderData, actionData }: Route.ComponentProps) {
  const { note } = loaderData;
  const values = actionData?.values ?? {
    title: note.title,
    body: note.body,
    tags: note.tags.map((t) => t.name).join(", "),
  };
  return (
    <NotePage>
      <BackLink to={`/notes/${note.id}`}>Back to the note</BackLink>
      <h1 className="mt-4 mb-6 text-3xl font-semibold tracking-tight">Edit note</h1>
      <NoteForm
        values={values}
        errors={actionData?.errors}
        submitLabel="Save changes"
        cancelTo={`/notes/${note.id}`}
        result={actionData}
        preview={actionData && "preview" in actionData ? actionData.preview : undefined}
      />
    </NotePage>
  );
}
