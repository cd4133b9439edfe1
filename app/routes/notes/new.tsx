import { formFailure } from "../../lib/form-results.server";
import { readFormValues, validateForm } from "../../lib/forms.server";
import { requireUser } from "../../lib/guards.server";
import { redirectNoStore } from "../../lib/http.server";
import type { Route } from "./+types/new";
import { setNoteTags } from "./parts/data.server";
import { BackLink, NoteForm, NotePage } from "./parts/note-form";
import { NOTE_FORM, previewDraft, saveFailure } from "./parts/save.server";
import { noteSchema } from "./parts/schemas.server";

export const meta: Route.MetaFunction = () => [{ title: "New note · Edge Notes" }];

export function loader({ request, context }: Route.LoaderArgs) {
  requireUser(request, context);
  return null;
}

export async function action({ request, context }: Route.ActionArgs) {
  const { supabase } = requireUser(request, context);
  const values = await readFormValues(request, NOTE_FORM);
  if (values.intent === "preview") return previewDraft(values);
  const parsed = validateForm(values, noteSchema, NOTE_FORM);
  if (!parsed.ok) return formFailure(parsed);
  const { title, body, tags } = parsed.data;
  const { data: note, error } = await supabase
    .from("notes")
    .insert({ title, body })
    .select("id")
    .single();
  if (error) return saveFailure(error, parsed.values);
  if (tags.length > 0) await setNoteTags(supabase, note.id, tags);
  return redirectNoStore(`/notes/${note.id}`, 302);
}

export default function NewNote({ actionData }: Route.ComponentProps) {
  return (
    <NotePage>
      <BackLink to="/notes">All notes</BackLink>
      <h1 className="mt-4 mb-6 text-3xl font-semibold tracking-tight">New note</h1>
      <NoteForm
        values={actionData?.values ?? {}}
        errors={actionData?.errors}
        submitLabel="Create note"
        cancelTo="/notes"
        result={actionData}
        preview={actionData && "preview" in actionData ? actionData.preview : undefined}
      />
    </NotePage>
  );
}
