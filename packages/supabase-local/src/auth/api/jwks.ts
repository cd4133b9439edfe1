import type { AuthContext } from "../context.ts";

/** GET /.well-known/jwks.json: the public half of the ES256 key user access tokens are signed with. */
export function jwks({ signingKey }: AuthContext): Response {
  return Response.json(
    { keys: [signingKey.publicJwk] },
    { headers: { "Cache-Control": "public, max-age=600" } },
  );
}
