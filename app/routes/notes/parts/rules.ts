/**
 * The limits the database enforces on notes and tags (CHECK constraints in supabase/migrations),
 * shared by the server's validation and the forms' hints.
 */
export const TITLE_MAX = 200;
export const BODY_MAX = 20_000;
/**
 * How deep quotes and lists may nest in a note's Markdown. Each level is a container the parser
 * keeps open and the page a nested element: thousands of `>` crashed the renderer (call stack)
 * after seconds of CPU, on every view of the note, for its owner and whoever it was shared with.
 */
export const NESTING_MAX = 32;
/**
 * How many cells a note's tables may have in all. The parser fills each row to the table's width,
 * so a header of 180 columns over 366 one-character rows (1,455 characters) made 65,000 cells:
 * seconds of CPU and a gigabyte of memory at every view, for the note's owner and its readers.
 */
export const TABLE_CELLS_MAX = 10_000;
export const TAGS_MAX = 10;
export const TAG_PATTERN = /^[a-z0-9][a-z0-9_-]{0,31}$/;
export const SEARCH_MAX = 200;
export const PAGE_SIZE = 20;

export const TAG_RULES = "Up to 10, separated by commas: letters, digits, - and _.";

/** The attachments bucket's limits (supabase/migrations/20261128001000_attachments.sql). */
export const ATTACHMENT_MAX_BYTES = 10 * 1024 * 1024;
export const ATTACHMENT_TYPES = [
  "image/png",
  "image/jpeg",
  "image/gif",
  "image/webp",
  "image/avif",
  "application/pdf",
  "text/plain",
  "text/markdown",
  "text/csv",
] as const;
export const ATTACHMENT_RULES = "Up to 10 MB: images (PNG, JPEG, GIF, WebP, AVIF), PDF or text.";
/**
 * Files larger than this go up by TUS, in chunks of this size, and resume after a dropped
 * connection: Supabase recommends TUS above 6 MB, and hosted Storage takes TUS chunks of 6 MB.
 */
export const RESUMABLE_ABOVE_BYTES = 6 * 1024 * 1024;
/** An image's thumbnail on the note page, in CSS pixels (a square). */
export const THUMBNAIL_PX = 64;
/** Signed URLs the note page hands out live this long (seconds). */
export const SIGNED_URL_SECONDS = 300;

/** What went wrong with an attachment, by the code the note page's URL carries. */
export const ATTACHMENT_ERRORS = {
  no_file: "Choose a file to attach.",
  too_big: "That file is larger than 10 MB.",
  bad_type:
    "That type of file cannot be attached: use an image (PNG, JPEG, GIF, WebP, AVIF), a PDF or a text file.",
  long_name: "The file name is longer than 255 characters.",
  note_full: "A note has at most 20 attachments. Delete one first.",
  account_full: "An account has at most 200 attachments. Delete some you no longer need first.",
  unreadable: "The form could not be read. Try again.",
  not_stored: "The file could not be stored. Try again.",
  not_sent: "The upload stopped: the connection to the server was lost. Try again.",
} as const;
export type AttachmentError = keyof typeof ATTACHMENT_ERRORS;

/** The problem with a file before it is sent anywhere (the browser and the Worker both check). */
export function attachmentProblem(
  file: { size: number; type: string; name: string } | null,
): AttachmentError | null {
  // (a size below 0 comes only from a forged start-upload: a File's never is)
  if (!file || file.size <= 0) return "no_file";
  if (file.size > ATTACHMENT_MAX_BYTES) return "too_big";
  if (!(ATTACHMENT_TYPES as readonly string[]).includes(file.type)) return "bad_type";
  if (file.name.length > 255) return "long_name";
  return null;
}
