import { useState } from "react";
import { formFailure } from "../../lib/form-results.server";
import { readFormValues, validateForm } from "../../lib/forms.server";
import { requireUser } from "../../lib/guards.server";
import { dataNoStore, notFound, redirectNoStore } from "../../lib/http.server";
import type { Route } from "./+types/edit";
import { loadNote, ownsNote, parseNoteId, saveNoteVersion, setNoteTags } from "./parts/data.server";
import { useLiveNote } from "./parts/live";
import { renderMarkdown } from "./parts/markdown.server";
import { BackLink, NoteForm, NotePage } from "./parts/note-form";
import { ChangedElsewhere, SavedVersion, Viewers } from "./parts/note-live";
import { ownerName } from "./parts/note-meta";
import { NOTE_FORM, previewDraft, saveFailure } from "./parts/save.server";
import { noteSchema, noteVersion } from "./parts/schemas.server";

export const meta: Route.MetaFunction = ({ loaderData }) => [
  { title: `Edit ${loaderData?.note.title ?? "note"} · Edge Notes` },
];

export async function loader({ request, context, params }: Route.LoaderArgs) {
  const { supabase, claims } = requireUser(request, context);
  const note = await loadNote(supabase, parseNoteId(params.id));
  // A note shared with this user is theirs to read, not to edit: the same 404 as any other.
  if (note.owner_id !== claims.sub) notFound();
  return dataNoStore({
    note,
    me: { name: ownerName(note.owner), avatarPath: note.owner?.avatar_path ?? null },
  });
}

export async function action({ request, context, params }: Route.ActionArgs) {
  const { supabase, claims } = requireUser(request, context);
  const id = parseNoteId(params.id);
  const values = await readFormValues(request, NOTE_FORM);
  if (values.intent === "preview") return previewDraft(values);
  const parsed = validateForm(values, noteSchema, NOTE_FORM);
  if (!parsed.ok) return formFailure(parsed);
  const version = noteVersion.safeParse(values.version);
  if (!version.success) {
    // someone else's note (or none) is the same 404 as ever, whatever the form holds
    if (!(await ownsNote(supabase, id, claims.sub))) notFound();
    return formFailure({
      errors: {
        fields: {},
        form: "This form is out of date. Copy your text, reload the page and make your change again.",
      },
      values: parsed.values,
    });
  }
  const { title, body, tags } = parsed.data;
  const saved = await saveNoteVersion(supabase, {
    id,
    ownerId: claims.sub,
    title,
    body,
    version: version.data,
  });
  if (saved === "missing") notFound();
  if (saved === "conflict") {
    // Someone saved since this form was opened: nothing is overwritten. The page shows their
    // version beside what was typed; the form now carries their version, so saving again is a
    // deliberate choice to replace it.
    const current = await loadNote(supabase, id);
    return dataNoStore(
      {
        ok: false as const,
        errors: { fields: {} },
        values: { ...parsed.values, version: current.updated_at },
        conflict: {
          title: current.title,
          body: current.body ? renderMarkdown(current.body) : null,
          updated_at: current.updated_at,
        },
      },
      { status: 409 },
    );
  }
  if (saved !== "saved") return saveFailure(saved, parsed.values);
  await setNoteTags(supabase, id, tags);
  return redirectNoStore(`/notes/${id}`, 302);
}

export default function EditNote({ loaderData, actionData }: Route.ComponentProps) {
  const { note } = loaderData;
  const others = useLiveNote(note.id, loaderData.me);
  // What the form was opened on. Live re-reads bring the saved note into loaderData; they must
  // not replace what is being typed, nor the version the save is checked against.
  const [opened] = useState(note);
  const values = actionData?.values ?? {
    title: opened.title,
    body: opened.body,
    tags: opened.tags.map((t) => t.name).join(", "),
    version: opened.updated_at,
  };
  const conflict = actionData && "conflict" in actionData ? actionData.conflict : undefined;
  return (
    <NotePage>
      <BackLink to={`/notes/${note.id}`}>Back to the note</BackLink>
      <h1 className="mt-4 mb-2 text-3xl font-semibold tracking-tight">Edit note</h1>
      <Viewers viewers={others} />
      <div className="mt-4 space-y-4">
        {conflict ? (
          <SavedVersion saved={conflict} />
        ) : note.updated_at !== values.version ? (
          <ChangedElsewhere reloadTo={`/notes/${note.id}/edit`} />
        ) : null}
        <NoteForm
          values={values}
          errors={actionData?.errors}
          submitLabel={conflict ? "Save mine instead" : "Save changes"}
          cancelTo={`/notes/${note.id}`}
          result={actionData}
          preview={actionData && "preview" in actionData ? actionData.preview : undefined}
        />
      </div>
    </NotePage>
  );
}
