import type { AuthContext } from "../context.ts";

/** GET /.well-known/jwks.json: the public half of every signing key (never the HS256 secret). */
export function jwks({ signingKeys }: AuthContext): Response {
  return Response.json(
    { keys: signingKeys.all.map((key) => key.publicJwk) },
    { headers: { "Cache-Control": "public, max-age=600" } },
  );
}
