import type { z } from "zod";

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

/** The form as name -> string (the first value of each name; files become ""). */
export async function readFormValues(
  request: Request,
  options: ReadFormOptions = {},
): Promise<Record<string, string>> {
  // Sign-in forms are a few hundred bytes; a huge body is not read at all (it fails validation).
  if (Number(request.headers.get("Content-Length") ?? 0) > (options.maxBytes ?? MAX_FORM_BYTES)) {
    return {};
  }
  let formData: FormData;
  try {
    formData = await request.formData();
  } catch {
    return {};
  }
  const values: Record<string, string> = {};
  for (const [name, value] of formData) {
    if (name in values) continue;
    values[name] = typeof value === "string" ? value : "";
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
