import type { AuthContext } from "../context.ts";
import { AuthError } from "../errors.ts";
import type { Db } from "../models/db.ts";
import { hookEnabled, invokeHook } from "./hooks.ts";

/**
 * The custom access token hook ([auth.hook.custom_access_token]): every access token Auth signs
 * (a sign-in, a refresh, an MFA step) first goes to the hook with its claims, and the claims it
 * returns are what is signed, once they pass Auth's minimum schema (tokens/service.go
 * MinimumViableTokenSchema). Without the hook the claims are signed as they are.
 */
export async function customizeClaims(
  ctx: AuthContext,
  db: Db,
  grant: { request: Request; method: string },
  claims: Record<string, unknown> & { sub: string },
): Promise<Record<string, unknown>> {
  if (!hookEnabled(ctx, "custom_access_token")) return claims;
  const output = await invokeHook(ctx, db, "custom_access_token", grant.request, {
    user_id: claims.sub,
    claims,
    authentication_method: grant.method,
  });
  // Nothing back (an HTTP 204, SQL null) leaves no claims: the schema refuses null.
  if (output && !("claims" in output))
    throw new AuthError(500, "unexpected_failure", "output claims field is missing", {
      uncoded: true,
    });
  const problems = schemaProblems(output ? output.claims : null);
  if (problems.length > 0)
    throw new AuthError(
      500,
      "unexpected_failure",
      `output claims do not conform to the expected schema: \n${problems.map((p) => `- ${p}\n`).join("")}`,
      { uncoded: true },
    );
  return output?.claims as Record<string, unknown>;
}

type JsonType = "string" | "integer" | "number" | "boolean" | "null" | "array" | "object";

/** The schema's property types, in its order. */
const PROPERTIES: [string, JsonType[]][] = [
  ["aud", ["string", "array"]],
  ["exp", ["integer"]],
  ["jti", ["string"]],
  ["iat", ["integer"]],
  ["iss", ["string"]],
  ["nbf", ["integer"]],
  ["sub", ["string"]],
  ["email", ["string"]],
  ["phone", ["string"]],
  ["app_metadata", ["object"]],
  ["user_metadata", ["object"]],
  ["role", ["string"]],
  ["aal", ["string"]],
  ["amr", ["array"]],
  ["session_id", ["string"]],
  ["client_id", ["string"]],
];
const REQUIRED = [
  "aud",
  "exp",
  "iat",
  "sub",
  "email",
  "phone",
  "role",
  "aal",
  "session_id",
  "is_anonymous",
];

/** JSON Schema's name for a value's type (an integral number is an integer). */
function jsonType(value: unknown): JsonType {
  if (value === null) return "null";
  if (Array.isArray(value)) return "array";
  if (typeof value === "number") return Number.isInteger(value) ? "integer" : "number";
  return typeof value as JsonType;
}

/** `given` matches `wanted` (an integer is a number too). */
const matches = (given: JsonType, wanted: JsonType[]) =>
  wanted.includes(given) || (given === "integer" && wanted.includes("number"));

/** The schema's complaints about the claims, worded as gojsonschema words them. */
function schemaProblems(claims: unknown): string[] {
  const invalidType = (field: string, wanted: JsonType[], value: unknown) =>
    `${field}: Invalid type. Expected: ${wanted.length > 1 ? `[${wanted.join(",")}]` : wanted[0]}, given: ${jsonType(value)}`;
  if (jsonType(claims) !== "object") return [invalidType("(root)", ["object"], claims)];
  const object = claims as Record<string, unknown>;
  const problems = REQUIRED.filter((name) => !(name in object)).map(
    (name) => `(root): ${name} is required`,
  );
  for (const [name, wanted] of PROPERTIES) {
    if (!(name in object)) continue;
    const value = object[name];
    if (!matches(jsonType(value), wanted)) {
      problems.push(invalidType(name, wanted, value));
      continue;
    }
    if (name === "amr")
      (value as unknown[]).forEach((entry, i) => {
        if (!matches(jsonType(entry), ["string", "object"]))
          problems.push(
            `amr.${i}: Must validate at least one schema (anyOf)`,
            invalidType(`amr.${i}`, ["string"], entry),
          );
      });
  }
  return problems;
}
