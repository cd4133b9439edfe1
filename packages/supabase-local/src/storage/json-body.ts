// A route's JSON body as upstream's Fastify reads it, for the routes that take one (routes.ts,
// vector-routes.ts): up to 1 MiB, an empty body as `{}` (its empty-body parser), and what its
// schemas refuse as a BodyError, rendered as Fastify's validation error (errors.ts).
import { BodyTooLarge, readLimitedBody } from "../http/request-body.ts";
import { ERRORS } from "./errors.ts";

/** A body upstream's JSON schema refuses, with Fastify's message ("body/name must be string"). */
export class BodyError extends Error {}

/** The request's JSON, parsed (any JSON value: each route's schema says what it takes). */
export async function jsonBody(request: Request): Promise<unknown> {
  let text: string;
  try {
    text = await readLimitedBody(request, 1024 * 1024);
  } catch (error) {
    if (error instanceof BodyTooLarge) throw ERRORS.entityTooLarge("request body");
    throw ERRORS.noContentProvided();
  }
  if (text.trim() === "") return {};
  try {
    return JSON.parse(text);
  } catch {
    throw new BodyError("Body is not valid JSON but content-type is set to 'application/json'");
  }
}
