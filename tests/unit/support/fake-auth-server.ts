import { exportJWK, generateKeyPair, SignJWT } from "jose";

/**
 * A stand-in for the Supabase Auth server, used only where a unit test must control the network
 * (count round trips, refuse connections). It signs real ES256 tokens and serves a real JWKS;
 * the code under test (our middleware and the real @supabase/ssr client) is not mocked.
 */
export const TEST_SUPABASE_URL = "http://backend.test";
export const STORAGE_KEY = "sb-backend-auth-token";

export interface FakeAuthServer {
  fetch: typeof fetch;
  /** Paths requested so far. */
  calls: string[];
  sign(claims: Record<string, unknown>, options?: { expiresIn?: number }): Promise<string>;
  session(options?: { expiresIn?: number; refreshToken?: string }): Promise<TestSession>;
}

export interface TestSession {
  access_token: string;
  refresh_token: string;
  token_type: "bearer";
  expires_in: number;
  expires_at: number;
  user: Record<string, unknown>;
}

export const TEST_USER = {
  id: "6f1f6a3e-2f7c-4c53-9a56-3e0b7a9f0c11",
  aud: "authenticated",
  role: "authenticated",
  email: "ada@example.com",
  app_metadata: { provider: "email" },
  user_metadata: {},
};

export async function createFakeAuthServer(
  options: { kid?: string; refreshable?: boolean } = {},
): Promise<FakeAuthServer> {
  const kid = options.kid ?? crypto.randomUUID();
  const { privateKey, publicKey } = await generateKeyPair("ES256", { extractable: true });
  const jwk = {
    ...(await exportJWK(publicKey)),
    kid,
    alg: "ES256",
    use: "sig",
    key_ops: ["verify"],
  };
  const calls: string[] = [];

  const sign = (claims: Record<string, unknown>, { expiresIn = 3600 } = {}) => {
    const now = Math.floor(Date.now() / 1000);
    return new SignJWT({
      aud: "authenticated",
      role: "authenticated",
      email: TEST_USER.email,
      aal: "aal1",
      session_id: "0b8e2d57-4d7c-4a4e-8f0e-2f1f3b0b3c55",
      is_anonymous: false,
      ...claims,
    })
      .setProtectedHeader({ alg: "ES256", kid, typ: "JWT" })
      .setSubject(TEST_USER.id)
      .setIssuer(`${TEST_SUPABASE_URL}/auth/v1`)
      .setIssuedAt(now)
      .setExpirationTime(now + expiresIn)
      .sign(privateKey);
  };

  const session = async ({ expiresIn = 3600, refreshToken = "refresh-1" } = {}) => ({
    access_token: await sign({}, { expiresIn }),
    refresh_token: refreshToken,
    token_type: "bearer" as const,
    expires_in: expiresIn,
    expires_at: Math.floor(Date.now() / 1000) + expiresIn,
    user: TEST_USER,
  });

  const handler: typeof fetch = async (input, init) => {
    const request = new Request(input, init);
    const url = new URL(request.url);
    calls.push(url.pathname);
    if (url.pathname === "/auth/v1/.well-known/jwks.json") {
      return Response.json({ keys: [jwk] });
    }
    if (
      url.pathname === "/auth/v1/token" &&
      url.searchParams.get("grant_type") === "refresh_token"
    ) {
      const body = (await request.json()) as { refresh_token?: string };
      if (options.refreshable === false || body.refresh_token !== "refresh-1") {
        return Response.json(
          {
            code: 400,
            error_code: "refresh_token_not_found",
            msg: "Invalid Refresh Token: Refresh Token Not Found",
          },
          { status: 400 },
        );
      }
      return Response.json(await session({ refreshToken: "refresh-2" }));
    }
    if (url.pathname === "/auth/v1/token" && url.searchParams.get("grant_type") === "password") {
      return Response.json(await session());
    }
    return Response.json({ message: "not found" }, { status: 404 });
  };

  return { fetch: handler, calls, sign, session };
}

/** The Cookie header @supabase/ssr would have set for this session (base64url, one chunk). */
export function sessionCookie(session: TestSession | Record<string, unknown>): string {
  const json = JSON.stringify(session);
  const base64url = btoa(String.fromCharCode(...new TextEncoder().encode(json)))
    .replaceAll("+", "-")
    .replaceAll("/", "_")
    .replace(/=+$/, "");
  return `${STORAGE_KEY}=base64-${base64url}`;
}
