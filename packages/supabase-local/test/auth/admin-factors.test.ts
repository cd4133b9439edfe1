// PUT /admin/users/{id}/factors/{factor_id}: an admin renames a user's factor (factor_updated in
// the audit log); unknown ids get the real 404s.
import { describe, expect, it } from "vitest";
import { authFetch, SECRET_KEY, signedInClient } from "../../../../tests/support/backend.ts";

function put(path: string, body: unknown) {
  return authFetch(path, {
    method: "PUT",
    key: SECRET_KEY,
    headers: { "X-Supabase-Api-Version": "2024-01-01" },
    body: JSON.stringify(body),
  });
}

describe("PUT /admin/users/{id}/factors/{factor_id}", () => {
  it("renames the factor and answers with it", async () => {
    const { client, user } = await signedInClient();
    const { data, error } = await client.auth.mfa.enroll({
      factorType: "totp",
      friendlyName: "phone app",
    });
    expect(error).toBeNull();
    const response = await put(`/admin/users/${user.id}/factors/${data?.id}`, {
      friendly_name: "old phone",
    });
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({
      id: data?.id,
      friendly_name: "old phone",
      factor_type: "totp",
      status: "unverified",
    });
    const audit = await authFetch(`/admin/audit?query=action:factor_updated`, { key: SECRET_KEY });
    const entries = (await audit.json()) as Array<{ payload: { traits?: { factor_id?: string } } }>;
    expect(entries.some((e) => e.payload.traits?.factor_id === data?.id)).toBe(true);
  });

  it("a friendly_name over 120 bytes is refused and the factor keeps its name", async () => {
    const { client, user } = await signedInClient();
    const { data } = await client.auth.mfa.enroll({ factorType: "totp", friendlyName: "phone" });
    for (const friendly_name of ["n".repeat(121), "x".repeat(8192)]) {
      const response = await put(`/admin/users/${user.id}/factors/${data?.id}`, { friendly_name });
      expect(response.status).toBe(400);
      expect(await response.json()).toEqual({
        code: "validation_failed",
        message: "friendly_name must be 120 characters or less",
      });
    }
    const nul = await put(`/admin/users/${user.id}/factors/${data?.id}`, {
      friendly_name: "a\u0000b",
    });
    expect(nul.status).toBe(400);
    const listed = await client.auth.mfa.listFactors();
    expect(listed.data?.all.map((f) => f.friendly_name)).toEqual(["phone"]);
  });

  it("an unknown factor is 404 mfa_factor_not_found", async () => {
    const { user } = await signedInClient();
    const response = await put(
      `/admin/users/${user.id}/factors/1c6c5d0e-7b1f-4d63-9a55-6c1d2e3f4a5b`,
      { friendly_name: "x" },
    );
    expect(response.status).toBe(404);
    expect(await response.json()).toEqual({
      code: "mfa_factor_not_found",
      message: "Factor not found",
    });
  });
});
