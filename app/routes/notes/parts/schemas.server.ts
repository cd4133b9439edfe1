import { z } from "zod";
import { withoutNul } from "../../../lib/forms.server";
import { safeNext } from "../../../lib/safe-redirect";
import { markdownNesting, markdownTableCells } from "./markdown.server";
import {
  BODY_MAX,
  NESTING_MAX,
  SEARCH_MAX,
  TABLE_CELLS_MAX,
  TAG_PATTERN,
  TAGS_MAX,
  TITLE_MAX,
} from "./rules";

/**
 * The notes forms' and URLs' fields, validated once on the server with the database's own limits.
 * Unknown fields (a crafted `owner_id`, `created_at`, …) are dropped by z.object, so they never
 * reach the data API.
 */
const title = z
  .string()
  .trim()
  .min(1, "Give the note a title.")
  .max(TITLE_MAX, `Titles can be at most ${TITLE_MAX} characters.`);

const BODY_TOO_LONG = `Notes can be at most ${BODY_MAX.toLocaleString("en")} characters.`;

const body = z
  // what could not be BODY_MAX characters even as CRLF stops here, before any other work
  .string()
  .max(BODY_MAX * 2, { message: BODY_TOO_LONG, abort: true })
  .optional()
  // Browsers send textarea line breaks as CRLF; store LF so the limit counts what people see.
  .transform((value) => (value ?? "").replace(/\r\n?/g, "\n"))
  .pipe(
    z
      .string()
      .max(BODY_MAX, { message: BODY_TOO_LONG, abort: true })
      .refine(
        (value) => markdownNesting(value) <= NESTING_MAX,
        `Quotes and lists can be nested at most ${NESTING_MAX} deep.`,
      )
      .refine(
        (value) => markdownTableCells(value) <= TABLE_CELLS_MAX,
        `Tables can have at most ${TABLE_CELLS_MAX.toLocaleString("en")} cells in all.`,
      ),
  );

/** "Work, Big ideas,work" -> ["work", "big-ideas"]. */
export const tags = z
  .string()
  .optional()
  .transform((value) => [
    ...new Set(
      (value ?? "")
        .split(",")
        .map((tag) => tag.trim().toLowerCase().replace(/\s+/g, "-"))
        .filter(Boolean),
    ),
  ])
  .pipe(
    z
      .array(
        z
          .string()
          .regex(
            TAG_PATTERN,
            "Tags can use letters, digits, - and _ (up to 32 characters, starting with a letter or digit).",
          ),
      )
      .max(TAGS_MAX, `Use at most ${TAGS_MAX} tags.`),
  );

export const noteSchema = z.object({ title, body, tags });

export const noteId = z.uuid();

/**
 * The version an edit form was opened on: the note's updated_at as the data API gave it. Saving
 * over a newer one is a conflict, not an overwrite.
 */
export const noteVersion = z.iso.datetime({ offset: true });

/** Pin, archive and their undo, from the list or the note page. */
export const toggleSchema = z.object({
  intent: z.enum(["pin", "unpin", "archive", "unarchive"]),
  /** The page to come back to without JavaScript: made safe here, as it enters. */
  returnTo: z.unknown().optional().transform(safeNext),
  fetcher: z.string().optional(),
});

export const shareSchema = z.object({
  email: z
    .string()
    .trim()
    .min(1, "Enter the email address of the person to share with.")
    .max(255, "Email addresses can be at most 255 characters.")
    .pipe(z.email({ error: "Enter an email address like name@example.com." }))
    .transform((value) => value.toLowerCase()),
});

/** Stop sharing: the address the share is listed under (the owner never sees the person's id). */
export const unshareSchema = z.object({ email: z.string().trim().toLowerCase().min(1).max(255) });

/** A recipient removes a shared note from their list, then goes back to the page it was on. */
export const leaveSchema = z.object({ returnTo: z.unknown().optional().transform(safeNext) });

/** The list's URL: /notes?view=&q=&tag=&page= (anything else is ignored). */
export const listQuerySchema = z.object({
  view: z.enum(["active", "archived", "shared"]).catch("active"),
  // NUL cannot be stored or searched in Postgres text: drop it instead of failing.
  q: z
    .string()
    .optional()
    .transform((value) =>
      withoutNul(value ?? "")
        .trim()
        .slice(0, SEARCH_MAX),
    ),
  tag: z
    .string()
    .optional()
    .transform((value) => (value ?? "").trim().toLowerCase()),
  page: z.string().optional(),
});
