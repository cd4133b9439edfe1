import { formText, readFormData } from "../../lib/forms.server";
import { requireUser } from "../../lib/guards.server";
import { jsonNoStore, notFound, redirectNoStore } from "../../lib/http.server";
import { accessToken, storageCalls } from "../../lib/storage.server";
import { getSupabaseEnv } from "../../lib/worker-context.server";
import type { Route } from "./+types/attachments";
import { addAttachment, deleteAttachment, prepareUpload } from "./parts/attachments.server";
import { parseNoteId } from "./parts/data.server";
import {
  ATTACHMENT_ERRORS,
  ATTACHMENT_MAX_BYTES,
  type AttachmentError,
  attachmentProblem,
} from "./parts/rules";
import { noteId as uuid } from "./parts/schemas.server";

/**
 * Attaching a file to a note and deleting one: plain form posts from the note page (multipart for
 * the file), so both work without JavaScript. The answer is a redirect back to the note, with
 * `attachment_error` naming what went wrong.
 *
 * With JavaScript the page sends no bytes here: `start-upload` (the file's name, size and type,
 * checked by the same rules) makes the row and answers JSON with a signed upload URL's token, and
 * the browser sends the file to Storage itself, with a progress bar (parts/attachment-upload.client.ts).
 */
export async function loader({ params }: Route.LoaderArgs) {
  return redirectNoStore(`/notes/${parseNoteId(params.id)}`, 302);
}

const back = (id: string, error?: AttachmentError) =>
  redirectNoStore(
    error
      ? `/notes/${id}?${new URLSearchParams({ attachment_error: error })}#attachments`
      : `/notes/${id}#attachments`,
  );

export async function action({ request, context, params }: Route.ActionArgs) {
  const { supabase } = requireUser(request, context);
  const id = parseNoteId(params.id);
  // A body well over the limit is not read, or not past the limit.
  const form = await readFormData(request, ATTACHMENT_MAX_BYTES + 64 * 1024);
  if (typeof form === "string") return back(id, form);
  const token = await accessToken(supabase);
  if (!token) notFound();
  const storage = storageCalls(getSupabaseEnv(context), token);
  if (form.get("intent") === "delete-attachment") {
    const attachment = uuid.safeParse(form.get("attachment"));
    if (!attachment.success) notFound();
    if (!(await deleteAttachment(supabase, storage, attachment.data))) notFound();
    return back(id);
  }
  if (form.get("intent") === "start-upload") {
    const file = {
      name: formText(form.get("name")),
      size: Number(form.get("size")),
      type: formText(form.get("type")),
    };
    const problem = Number.isSafeInteger(file.size) ? attachmentProblem(file) : "no_file";
    const ticket = problem ?? (await prepareUpload(supabase, storage, id, file));
    if (ticket === "not_found") notFound();
    if (typeof ticket === "string") {
      return jsonNoStore(
        { error: ticket, message: ATTACHMENT_ERRORS[ticket] },
        ticket === "not_stored" ? 503 : 400,
      );
    }
    return jsonNoStore(ticket);
  }
  const file = form.get("file");
  const upload = file instanceof File ? file : null;
  const problem = attachmentProblem(upload);
  if (problem || !upload) return back(id, problem ?? "no_file");
  const failed = await addAttachment(supabase, storage, id, upload);
  if (failed === "not_found") notFound();
  return back(id, failed ?? undefined);
}
