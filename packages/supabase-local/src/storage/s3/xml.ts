// The S3 endpoint's XML (fast-xml-parser, as upstream uses it): answers built from plain objects
// with S3's namespace on the root, request bodies (DeleteObjects, CompleteMultipartUpload) parsed
// to plain objects, and errors as S3's <Error> document with the real status.
import { XMLBuilder, XMLParser, XMLValidator } from "fast-xml-parser";
import { BodyTooLarge, readLimitedBody } from "../../http/request-body.ts";
import { ERRORS, type StorageError } from "../errors.ts";

const NAMESPACE = "http://s3.amazonaws.com/doc/2006-03-01/";
const DECLARATION = '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>';

const builder = new XMLBuilder({
  format: false,
  ignoreAttributes: false,
  attributeNamePrefix: "",
  attributesGroupName: "$",
  suppressEmptyNode: true,
  processEntities: true,
});

/** Elements a body may repeat, always read as arrays (by their path). */
const ARRAY_PATHS = new Set(["Delete.Object", "CompleteMultipartUpload.Part"]);

const parser = new XMLParser({
  ignoreDeclaration: true,
  ignoreAttributes: true,
  parseTagValue: false,
  trimValues: false,
  processEntities: true,
  isArray: (_name, path) => ARRAY_PATHS.has(String(path)),
});

/** Characters XML 1.0 cannot hold, escaped or not. */
const NOT_XML = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]/;
const EVERY_NOT_XML = new RegExp(NOT_XML.source, "g");

/** An XML answer: `{ Root: {...} }`, the root given S3's namespace. */
export function xmlResponse(document: Record<string, unknown>, init: ResponseInit = {}): Response {
  const [root, value] = Object.entries(document)[0] as [string, unknown];
  const namespace = { $: { xmlns: NAMESPACE } };
  // a root of text alone (LocationConstraint) is its element's text
  const content =
    value !== null && typeof value === "object"
      ? { ...namespace, ...value }
      : { ...namespace, "#text": value };
  const body = builder.build({ [root]: content }) as string;
  const headers = new Headers(init.headers);
  headers.set("Content-Type", "application/xml; charset=utf-8");
  // a key may hold a control character XML cannot carry: U+FFFD instead, as upstream writes it
  return new Response(DECLARATION + body.replace(EVERY_NOT_XML, "\uFFFD"), { ...init, headers });
}

/**
 * The request's XML body, up to 1 MiB (Fastify's body limit, behind upstream's parser); undefined
 * when empty.
 */
export async function xmlBody(request: Request): Promise<Record<string, unknown> | undefined> {
  let text: string;
  try {
    text = await readLimitedBody(request, 1024 * 1024);
  } catch (error) {
    if (error instanceof BodyTooLarge) throw ERRORS.entityTooLarge("request body");
    throw error;
  }
  return text.trim() === "" ? undefined : parseXml(text);
}

/** An XML document, one root element: MalformedXML (400) for anything else. */
export function parseXml(text: string): Record<string, unknown> {
  const xml = text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  if (/<!DOCTYPE/i.test(xml))
    throw ERRORS.malformedXml("Invalid XML payload: DOCTYPE is not supported");
  if (NOT_XML.test(xml)) throw ERRORS.malformedXml("Invalid XML payload: Invalid XML character");
  const valid = XMLValidator.validate(xml);
  if (valid !== true) throw ERRORS.malformedXml(`Invalid XML payload: ${valid.err.msg}`);
  const document = parser.parse(xml) as Record<string, unknown>;
  const roots = Object.keys(document);
  const root = document[roots[0] as string];
  if (roots.length !== 1 || root === undefined || Array.isArray(root))
    throw ERRORS.malformedXml(
      "Invalid XML payload: XML payload must contain a single root element",
    );
  return document;
}

/**
 * A StorageError as S3's error document, with its real status (upstream's s3ErrorHandler): the
 * resource is the request's path below /s3. A HEAD answer has no body, as on S3.
 */
export function xmlError(error: StorageError, request: Request): Response {
  const path = new URL(request.url).pathname;
  const resource = path
    .replace(/^\/storage\/v1\/s3/, "")
    .split("/")
    .filter(Boolean)
    .join("/");
  const response = xmlResponse(
    { Error: { Resource: resource, Code: error.code, Message: error.message } },
    { status: error.status },
  );
  return request.method === "HEAD"
    ? new Response(null, { status: response.status, headers: response.headers })
    : response;
}
