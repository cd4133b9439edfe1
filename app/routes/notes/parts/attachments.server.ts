import type { SupabaseClient } from "@supabase/supabase-js";
import type { Database } from "../../../lib/database.types";
import { withoutNul } from "../../../lib/forms.server";
import { backendFailure } from "../../../lib/http.server";
import type { ImageTransform, StorageCalls } from "../../../lib/storage.server";
import { type AttachmentError, SIGNED_URL_SECONDS, THUMBNAIL_PX } from "./rules";

/**
 * Files on notes: a row in public.attachments (display name, size, type) and an object in the
 * private `attachments` bucket under `<owner id>/<note id>/<attachment id>` (decision 033). Both
 * are reached as the signed-in user, so RLS decides who sees and changes what.
 */
type Client = SupabaseClient<Database>;

export const BUCKET = "attachments";

export interface Attachment {
  id: string;
  name: string;
  size: number;
  type: string;
  image: boolean;
  /**
   * An image's thumbnail: a signed URL of the picture cut to THUMBNAIL_PX square by Storage's image
   * transformations where the project has them, else the plain signed URL (the page scales it).
   * Null for other files, or when Storage refused it.
   */
  thumbnailUrl: string | null;
  /** Signed, at most SIGNED_URL_SECONDS old, with `download=` the display name; null if refused. */
  downloadUrl: string | null;
}

/** Thumbnails at twice their CSS size, for sharp screens; cut to a square, as the page shows them. */
const THUMBNAIL: ImageTransform = {
  width: THUMBNAIL_PX * 2,
  height: THUMBNAIL_PX * 2,
  resize: "cover",
};

export const objectKey = (row: { owner_id: string; note_id: string; id: string }) =>
  `${row.owner_id}/${row.note_id}/${row.id}`;

const IMAGE_TYPES = new Set(["image/png", "image/jpeg", "image/gif", "image/webp", "image/avif"]);

export interface AttachmentRow {
  id: string;
  note_id: string;
  owner_id: string;
  name: string;
  size: number;
  content_type: string;
}

/**
 * The note's attachments (read with the note: loadNote embeds them) with signed URLs, and none
 * made when the note has no files. Every file's download URL comes from one batch call; Storage's
 * batch call takes no transformation, so each image's thumbnail is a call of its own (with
 * `transformations` true, as offersImageTransformations decided), all sent at once: the page waits
 * one round trip whatever the number of files (at most 20 a note).
 */
export async function withSignedUrls(
  storage: StorageCalls,
  data: AttachmentRow[],
  transformations: boolean,
): Promise<Attachment[]> {
  const keys = data.map(objectKey);
  const [urls, thumbnails] = await Promise.all([
    storage.signUrls(BUCKET, keys, SIGNED_URL_SECONDS),
    Promise.all(
      data.map((row, i) =>
        transformations && IMAGE_TYPES.has(row.content_type)
          ? storage.signUrl(BUCKET, keys[i] ?? "", SIGNED_URL_SECONDS, THUMBNAIL)
          : null,
      ),
    ),
  ]);
  return data.map((row, i) => {
    const url = urls[i] ?? null;
    const image = IMAGE_TYPES.has(row.content_type);
    return {
      id: row.id,
      name: row.name,
      size: row.size,
      type: row.content_type,
      image,
      thumbnailUrl: image ? (thumbnails[i] ?? url) : null,
      downloadUrl: url ? `${url}&download=${encodeURIComponent(row.name)}` : null,
    };
  });
}

/**
 * The attachment's row, made first: the bucket's insert policy needs it, and its id (the
 * database's) is the object key's last segment. Returns the row, or what went wrong.
 */
async function createRow(
  supabase: Client,
  noteId: string,
  file: { name: string; size: number; type: string },
): Promise<{ id: string; note_id: string; owner_id: string } | AttachmentError | "not_found"> {
  const { data: row, error } = await supabase
    .from("attachments")
    .insert({
      note_id: noteId,
      // (a multipart file name can carry a NUL, which Postgres refuses in text)
      name: withoutNul(file.name) || "file",
      size: file.size,
      content_type: file.type,
    })
    .select("id, note_id, owner_id")
    .single();
  if (error?.code === "54000") return /note/.test(error.message) ? "note_full" : "account_full";
  // Not the owner of the note (the foreign key or the policy): the same answer as a missing note.
  if (error?.code === "23503" || error?.code === "42501") return "not_found";
  if (error) backendFailure(error);
  return row;
}

/**
 * The row first, then the bytes; a refused upload takes its row back. The result is what went
 * wrong, or null when the file is attached. (JavaScript off: the file came with the form.)
 */
export async function addAttachment(
  supabase: Client,
  storage: StorageCalls,
  noteId: string,
  file: File,
): Promise<AttachmentError | "not_found" | null> {
  const row = await createRow(supabase, noteId, file);
  if (typeof row === "string") return row;
  const uploaded = await storage.upload(BUCKET, objectKey(row), file, file.type);
  if (uploaded.ok) return null;
  await supabase.from("attachments").delete().eq("id", row.id);
  // The bucket's own limits answer too (a type the browser mislabelled, a size it misreported).
  if (uploaded.status === 413 || /size/i.test(uploaded.message ?? "")) return "too_big";
  if (/mime type/i.test(uploaded.message ?? "")) return "bad_type";
  return "not_stored";
}

/** What the browser needs to send a file's bytes to Storage itself (JavaScript on). */
export interface UploadTicket {
  /** The attachment's id (its row exists already). */
  id: string;
  /** The object key in the bucket: `<owner>/<note>/<id>`. */
  path: string;
  bucket: string;
  /** A signed upload URL's token: for `PUT /object/upload/sign/…` or TUS's `x-signature`. */
  token: string;
}

/**
 * The row first, then a signed upload URL for its key, made as the user (the bucket's insert
 * policy decides, with the row in place). The browser uploads with it; if it never does (the tab
 * closed), the row stays without a file, shown to the owner as not uploaded, until deleted.
 */
export async function prepareUpload(
  supabase: Client,
  storage: StorageCalls,
  noteId: string,
  file: { name: string; size: number; type: string },
): Promise<UploadTicket | AttachmentError | "not_found"> {
  const row = await createRow(supabase, noteId, file);
  if (typeof row === "string") return row;
  const path = objectKey(row);
  const token = await storage.signUpload(BUCKET, path);
  if (token) return { id: row.id, path, bucket: BUCKET, token };
  await supabase.from("attachments").delete().eq("id", row.id);
  return "not_stored";
}

/** Deletes one attachment of the caller's: the row, then its bytes; false when there was none. */
export async function deleteAttachment(
  supabase: Client,
  storage: StorageCalls,
  id: string,
): Promise<boolean> {
  const { data, error } = await supabase
    .from("attachments")
    .delete()
    .eq("id", id)
    .select("id, note_id, owner_id");
  if (error) backendFailure(error);
  const row = data[0];
  if (!row) return false;
  // A failure here leaves bytes no row names: sweepOrphans removes them at the next note delete.
  await storage.remove(BUCKET, [objectKey(row)]);
  return true;
}

/**
 * Rows whose file never arrived (the browser's upload was cut off: a tab closed halfway) are
 * deleted once no upload can still complete them: the signed upload URL the browser got lives 2
 * hours (upstream), and the plain form uploads within its own request.
 */
const UNFINISHED_AFTER_MS = 3 * 60 * 60 * 1000;

/**
 * Removes the user's files that no attachment row names any more: those of deleted notes (the
 * rows went with the note, by cascade; Storage forbids deleting objects in SQL) and any a failed
 * delete left; and the rows of uploads that never finished (UNFINISHED_AFTER_MS). Runs after each
 * note delete. Returns how many files and rows it removed.
 */
export async function sweepOrphans(
  supabase: Client,
  storage: StorageCalls,
  userId: string,
): Promise<number> {
  // Files first, rows second: a file listed here was uploaded after its row was made, so a row
  // read afterwards names every file that belongs to someone (an upload in flight included).
  const folders = await storage.list(BUCKET, `${userId}/`);
  if (!folders) return 0;
  const files: string[] = [];
  // every folder listed: only then does a row without a file in the listing have none
  let complete = true;
  for (const folder of folders.filter((f) => f.folder)) {
    const listed = await storage.list(BUCKET, `${userId}/${folder.name}/`);
    if (!listed) complete = false;
    for (const file of listed ?? []) if (!file.folder) files.push(`${folder.name}/${file.name}`);
  }
  const { data: rows, error } = await supabase
    .from("attachments")
    .select("id, note_id, created_at")
    .eq("owner_id", userId);
  if (error) return 0;
  const known = new Set(rows.map((r) => `${r.note_id}/${r.id}`));
  const orphans = files.filter((f) => !known.has(f)).map((f) => `${userId}/${f}`);
  if (orphans.length > 0) await storage.remove(BUCKET, orphans);
  const stored = new Set(files);
  const unfinished = complete
    ? rows
        .filter((r) => !stored.has(`${r.note_id}/${r.id}`))
        .filter((r) => Date.now() - Date.parse(r.created_at) > UNFINISHED_AFTER_MS)
        .map((r) => r.id)
    : [];
  if (unfinished.length > 0) await supabase.from("attachments").delete().in("id", unfinished);
  return orphans.length + unfinished.length;
}
