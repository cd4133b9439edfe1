// [auth] external_url and jwt_issuer, as the CLI passes them to Auth (API_EXTERNAL_URL and
// GOTRUE_JWT_ISSUER): the links Auth mails point at the external URL, and access tokens and the
// discovery document carry the issuer.
import { decodeJwt } from "jose";
import { afterAll, beforeAll, expect, it } from "vitest";
import { PASSWORD, randomEmail } from "../../../../tests/support/backend.ts";
import { type MemoryBackend, memoryBackend } from "../../../../tests/support/memory-backend.ts";

let local: MemoryBackend;

beforeAll(async () => {
  local = await memoryBackend({
    auth: {
      externalUrl: "https://auth.example.test/auth/v1",
      jwtIssuer: "https://issuer.example.test/",
    },
  });
}, 60_000);
afterAll(async () => {
  await local?.close();
});

it("access tokens and the discovery document carry jwt_issuer; mailed links lead to external_url", async () => {
  const { session } = await local.signedIn();
  expect(decodeJwt(session.access_token).iss).toBe("https://issuer.example.test/");
  const discovery = await (
    await local.fetch(`${local.backend.url}/auth/v1/.well-known/openid-configuration`)
  ).json();
  expect(discovery).toMatchObject({
    issuer: "https://issuer.example.test/",
    jwks_uri: "https://issuer.example.test/.well-known/jwks.json",
  });

  // the link Auth makes ({{ .ConfirmationURL }}; the project's own templates link to its site)
  const email = randomEmail("external");
  const link = await local
    .admin()
    .auth.admin.generateLink({ type: "signup", email, password: PASSWORD });
  if (link.error) throw link.error;
  expect(link.data.properties.action_link).toMatch(
    /^https:\/\/auth\.example\.test\/auth\/v1\/verify\?token=/,
  );
});
