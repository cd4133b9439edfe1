import type { PostgrestError } from "@supabase/supabase-js";
import { formFailure } from "../../../lib/form-results.server";
import { backendFailure, dataNoStore } from "../../../lib/http.server";
import { renderMarkdown } from "./markdown.server";

/** Note forms carry whole bodies: read up to 1 MiB and echo everything back on errors. */
export const NOTE_FORM = { maxBytes: 1024 * 1024, echoChars: 1024 * 1024 };

/**
 * A write the database refused. Its CHECK constraints mirror the form's rules, so this only
 * happens if the two drift: the message goes above the form, with what was typed kept.
 */
export function saveFailure(error: PostgrestError, values: Record<string, string>) {
  if (error.code === "23514" || error.code === "22001") {
    return formFailure({
      errors: {
        fields: {},
        form: "The note could not be saved: check the title, text and tags.",
        code: error.code,
      },
      values,
    });
  }
  backendFailure(error);
}

/**
 * "Preview" on a note form: the draft's Markdown rendered on the server, and the draft itself
 * back into the form. Nothing is validated or saved.
 */
export function previewDraft(values: Record<string, string>) {
  const draft = {
    title: values.title ?? "",
    body: values.body ?? "",
    tags: values.tags ?? "",
    // the edit form's version travels with the draft, so a save after a preview is still checked
    ...(values.version === undefined ? {} : { version: values.version }),
  };
  return dataNoStore({
    preview: draft.body ? renderMarkdown(draft.body) : null,
    values: draft,
    errors: undefined,
  });
}
