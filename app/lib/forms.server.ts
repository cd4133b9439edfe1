import { data } from "react-router";
import type { z } from "zod";
import { noStore } from "./http.server";

/** Messages beside fields (by field name) and one for the whole form. */
export interface FormErrors {
  fields: Record<string, string>;
  form?: string;
  /** The Supabase error code, for the support line under a form error. */
  code?: string;
  /** Seconds until the server accepts another email (rate limits), when it said so. */
  retryAfter?: number;
}

/** What an action returns when the form needs fixing: the errors and what was typed (no secrets). */
export interface FormFailure {
  ok: false;
  errors: FormErrors;
  values: Record<string, string>;
  /** Sign-in refused because the address is not confirmed yet: offer to resend the email. */
  unconfirmed?: boolean;
}

export type Parsed<T> = { ok: true; data: T; values: Record<string, string> } | FormFailure;

const MAX_FORM_BYTES = 64 * 1024;

/** Fields never echoed back to the page. */
const SECRET_FIELDS = new Set(["password", "code", "recoveryCode"]);

/**
 * Reads a urlencoded or multipart form and validates it with the schema. Every field is read as a
 * string (a File or a repeated field cannot sneak through); the first message per field is kept.
 */
export async function parseForm<S extends z.ZodType>(
  request: Request,
  schema: S,
  options: ReadFormOptions = {},
): Promise<Parsed<z.infer<S>>> {
  return validateForm(await readFormValues(request, options), schema, options);
}

export interface ReadFormOptions {
  /** Bodies larger than this are not read (default 64 KiB; note bodies need more). */
  maxBytes?: number;
  /** How much of each value is echoed back to the page (default 320 characters). */
  echoChars?: number;
}

/** Validates form values already read (when an action first looks at `intent`). */
export function validateForm<S extends z.ZodType>(
  values: Record<string, string>,
  schema: S,
  options: ReadFormOptions = {},
): Parsed<z.infer<S>> {
  const result = schema.safeParse(values);
  const echo = publicValues(values, options.echoChars);
  if (result.success) return { ok: true, data: result.data, values: echo };
  const fields: Record<string, string> = {};
  for (const issue of result.error.issues) {
    const name = String(issue.path[0] ?? "form");
    fields[name] ??= issue.message;
  }
  const { form, ...rest } = fields;
  return { ok: false, errors: { fields: rest, form }, values: echo };
}

/** Why a form post's body was not read: larger than the form allows, or not a form at all. */
export type FormRefused = "too_big" | "unreadable";

/**
 * The request's form (urlencoded or multipart), reading at most `maxBytes` of its body. A body
 * that declares more is not read at all; one that declares nothing (chunked) is cut off once it
 * passes the limit. So no form post makes the Worker hold more than that in memory, or wait for a
 * body that never ends.
 */
export async function readFormData(
  request: Request,
  maxBytes: number,
): Promise<FormData | FormRefused> {
  if (Number(request.headers.get("Content-Length") ?? 0) > maxBytes) return "too_big";
  let over = false;
  let read = 0;
  const limited = request.body?.pipeThrough(
    new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        read += chunk.byteLength;
        if (read <= maxBytes) return controller.enqueue(chunk);
        over = true;
        controller.error(new RangeError(`the form is larger than ${maxBytes} bytes`));
      },
    }),
  );
  const type = request.headers.get("Content-Type");
  try {
    return await new Response(
      limited,
      type ? { headers: { "Content-Type": type } } : {},
    ).formData();
  } catch {
    return over ? "too_big" : "unreadable";
  }
}

/**
 * A form field's text as it can be stored: without NUL characters, which no one types, a browser
 * never sends from a field, and Postgres refuses in text (22P05, 22021), so one in a crafted post
 * failed the page's request instead of being a form error.
 */
export function formText(value: FormDataEntryValue | null): string {
  return typeof value === "string" ? withoutNul(value) : "";
}

/** Text without NUL characters (formText's rule, for text that comes from elsewhere). */
export function withoutNul(text: string): string {
  return text.replaceAll("\0", "");
}

/** The form as name -> string (the first value of each name, as formText; files become ""). */
export async function readFormValues(
  request: Request,
  options: ReadFormOptions = {},
): Promise<Record<string, string>> {
  // Sign-in forms are a few hundred bytes; a huge body is not read (it fails validation).
  const formData = await readFormData(request, options.maxBytes ?? MAX_FORM_BYTES);
  // Far past anything its fields allow (a note's body pasted many times over): said so, rather
  // than validating an empty form whose messages ("Give the note a title.") would be wrong.
  if (formData === "too_big") {
    throw data(
      {
        code: "form_too_large",
        message:
          "The form was too large to read, so nothing was saved. Shorten the text and try again.",
      },
      noStore({ status: 413, statusText: "Form too large" }),
    );
  }
  if (typeof formData === "string") return {};
  const values: Record<string, string> = {};
  for (const [name, value] of formData) {
    if (name in values) continue;
    values[name] = formText(value);
  }
  return values;
}

function publicValues(values: Record<string, string>, chars = 320): Record<string, string> {
  const echo: Record<string, string> = {};
  for (const [name, value] of Object.entries(values)) {
    if (!SECRET_FIELDS.has(name)) echo[name] = value.slice(0, chars);
  }
  return echo;
}
