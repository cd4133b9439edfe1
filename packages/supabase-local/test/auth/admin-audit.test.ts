// GET /admin/audit: the audit log through the admin API (the secret key), newest first, with the
// real pagination headers and `query=<author|action|type>:<text>` filters.
import { describe, expect, it } from "vitest";
import { authFetch, SECRET_KEY, signedInClient } from "../../../../tests/support/backend.ts";

async function audit(query: string) {
  const response = await authFetch(`/admin/audit${query}`, {
    key: SECRET_KEY,
    headers: { "X-Supabase-Api-Version": "2024-01-01" },
  });
  return { response, body: await response.json() };
}

describe("GET /admin/audit", () => {
  it("lists one author's entries, newest first, paginated", async () => {
    const { client, email } = await signedInClient();
    await client.auth.refreshSession();
    const all = await audit(`?query=${encodeURIComponent(`author:${email}`)}`);
    expect(all.response.status).toBe(200);
    const actions = (all.body as Array<{ payload: { action: string } }>).map(
      (e) => e.payload.action,
    );
    expect(actions[0]).toBe("token_refreshed");
    expect(actions).toContain("login");
    expect(all.response.headers.get("x-total-count")).toBe(String(actions.length));
    expect(all.body[0]).toEqual({
      id: expect.any(String),
      payload: expect.objectContaining({ actor_username: email, log_type: "token" }),
      created_at: expect.any(String),
      ip_address: expect.any(String),
    });
    const first = await audit(`?per_page=1&query=${encodeURIComponent(`author:${email}`)}`);
    expect(first.body).toHaveLength(1);
    expect(first.response.headers.get("link")).toMatch(/page=2&per_page=1&query=.*rel="next"/);
  });

  it("refuses an unknown scope and bad pagination with validation_failed", async () => {
    expect((await audit("?query=who:ann")).body).toEqual({
      code: "validation_failed",
      message: "Invalid query scope: who:ann",
    });
    expect((await audit("?page=-1")).body).toEqual({
      code: "validation_failed",
      message: 'Bad Pagination Parameters: strconv.ParseUint: parsing "-1": invalid syntax',
    });
  });
});
