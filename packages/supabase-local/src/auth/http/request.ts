import { requestContext } from "../../http/context.ts";
import { BodyTooLarge, readLimitedBody } from "../../http/request-body.ts";
import { AuthError, authError } from "../errors.ts";

/** The largest request body accepted (bytes), as the real service's body limit. */
export const MAX_BODY_BYTES = 1024 * 1024;

/** Reads at most MAX_BODY_BYTES of the body as text (413 beyond that, whatever Content-Length says). */
export async function readBody(request: Request): Promise<string> {
  try {
    return await readLimitedBody(request, MAX_BODY_BYTES);
  } catch (error) {
    if (error instanceof BodyTooLarge) throw authError("tooLarge");
    throw error;
  }
}

type Kind = "string" | "boolean" | "number" | "object";
type Shape = Record<string, Kind>;
type Out<S extends Shape> = {
  [K in keyof S]?: S[K] extends "string"
    ? string
    : S[K] extends "boolean"
      ? boolean
      : S[K] extends "number"
        ? number
        : Record<string, unknown>;
};

/**
 * Parses the JSON body into the named fields with their types, the way Go's json.Unmarshal into
 * the handler's params struct does: malformed JSON or a field of the wrong type is `bad_json`
 * (400), unknown fields are ignored, `null` is as good as absent.
 */
export async function readParams<S extends Shape>(request: Request, shape: S): Promise<Out<S>> {
  return pick(await readJson(request), shape);
}

/** The body as JSON, any shape (for fields Go keeps as json.RawMessage); malformed is `bad_json`. */
export async function readJson(request: Request): Promise<unknown> {
  return parseJson(await readBody(request));
}

declare global {
  interface String {
    /** ES2024 (Node 20+); the project's lib is ES2023. */
    isWellFormed(): boolean;
    toWellFormed(): string;
  }
}

/**
 * The deepest nesting of arrays and objects a body may have. Go's decoder refuses deeper than
 * 10000 levels ("exceeded max depth"); here JSON.stringify recurses per level and overflows the
 * stack near 1,600, so a body is held to a depth every step after parsing (storing `data` as
 * jsonb, signing it into a JWT, answering with it) handles with room to spare.
 */
export const MAX_JSON_DEPTH = 512;

/**
 * A request body's text as Auth's handlers see it (every JSON body the Auth API reads comes
 * through here): malformed JSON or nesting beyond MAX_JSON_DEPTH is `bad_json`; a lone surrogate
 * (`"\ud800"`) becomes U+FFFD, as Go's decoder makes it, so the value is valid UTF-8 that Postgres
 * stores; a NUL in any string or key is refused with a 400: Go accepts it, but Postgres can hold
 * it in neither text nor jsonb and the real service then fails with a 500.
 */
export function parseJson(text: string): unknown {
  if (tooDeep(text)) throw badJson("exceeded max depth");
  try {
    return JSON.parse(text, wellFormed);
  } catch (error) {
    if (error instanceof AuthError) throw error;
    throw badJson(text === "" ? "unexpected end of JSON input" : (error as Error).message);
  }
}

/** Whether `text` nests deeper than MAX_JSON_DEPTH (brackets inside strings do not count). One
 * pass, no recursion: JSON.parse copes with any depth, what comes after it does not. */
function tooDeep(text: string): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      // a backslash escapes the next character
      if (c === 0x5c) i++;
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) {
      inString = true;
    } else if (c === 0x5b || c === 0x7b) {
      if (++depth > MAX_JSON_DEPTH) return true;
    } else if (c === 0x5d || c === 0x7d) {
      depth--;
    }
  }
  return false;
}

/** JSON.parse's reviver: strings and keys well-formed, none with a NUL. */
function wellFormed(_key: string, value: unknown): unknown {
  if (typeof value === "string") {
    if (value.includes("\0")) throw authError("nulInBody");
    return value.toWellFormed();
  }
  if (value === null || typeof value !== "object" || Array.isArray(value)) return value;
  let rename = false;
  for (const key of Object.keys(value)) {
    if (key.includes("\0")) throw authError("nulInBody");
    if (!key.isWellFormed()) rename = true;
  }
  // keys that become equal keep the last value, as in Go's map; fromEntries defines each key as
  // an own property (a "__proto__" key stays data, as JSON.parse made it)
  return rename
    ? Object.fromEntries(Object.entries(value).map(([k, v]) => [k.toWellFormed(), v]))
    : value;
}

/** A json.RawMessage field of a decoded body: absent or null is undefined (Go's nil). */
export function rawField(body: unknown, name: string): unknown {
  if (!body || typeof body !== "object" || Array.isArray(body)) return undefined;
  const value = (body as Record<string, unknown>)[name];
  return value === null ? undefined : value;
}

export function pick<S extends Shape>(value: unknown, shape: S): Out<S> {
  if (value === null) return {};
  if (typeof value !== "object" || Array.isArray(value)) {
    throw badJson(`json: cannot unmarshal ${goType(value)} into Go value of type struct`);
  }
  const out: Record<string, unknown> = {};
  for (const [key, kind] of Object.entries(shape)) {
    const v = (value as Record<string, unknown>)[key];
    if (v === undefined || v === null) continue;
    const ok = kind === "object" ? typeof v === "object" && !Array.isArray(v) : typeof v === kind;
    if (!ok)
      throw badJson(
        `json: cannot unmarshal ${goType(v)} into Go struct field .${key} of type ${goKind(kind)}`,
      );
    out[key] = v;
  }
  return out as Out<S>;
}

function badJson(detail: string): AuthError {
  return authError("badJson", `Could not parse request body as JSON: ${detail}`);
}

function goType(v: unknown): string {
  if (Array.isArray(v)) return "array";
  if (typeof v === "object") return "object";
  return typeof v;
}

function goKind(kind: Kind): string {
  return { string: "string", boolean: "bool", number: "int", object: "map[string]interface {}" }[
    kind
  ];
}

/** The caller's address, as the gateway decided it (http/gateway.ts, http/client-address.ts): the socket's,
 * a proxy header only when the backend trusts it, or Sb-Forwarded-For from a server holding the
 * secret key when local-backend.toml turns it on. A client-written X-Forwarded-For never counts. */
export function clientIp(request: Request): string {
  return requestContext(request).clientAddress;
}
