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
  const text = await readBody(request);
  try {
    return JSON.parse(text);
  } catch (error) {
    throw badJson(text === "" ? "unexpected end of JSON input" : (error as Error).message);
  }
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
