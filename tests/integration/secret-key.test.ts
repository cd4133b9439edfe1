// The secret key (SUPABASE_SECRET_KEY, a Wrangler secret; the app under test has the local
// backend's) stays in the Worker: never in the browser build, the built Worker's code or config,
// a page, its loader data or an error page (docs/decisions/022-rate-limits-count-people.md).
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";
import { get, SECRET_KEY } from "./support/app";

const BUILD = fileURLToPath(new URL("../../build/", import.meta.url));

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => join(entry.parentPath, entry.name));
}

describe("the secret key", () => {
  it("is nowhere in the build: not in the browser's files, nor baked into the Worker", () => {
    const client = filesUnder(join(BUILD, "client"));
    expect(client.length).toBeGreaterThan(0);
    // (supabase-js itself names the sb_secret_ prefix, to refuse such keys in a browser)
    const leaks = client.filter((file) => {
      const text = readFileSync(file, "latin1");
      return text.includes(SECRET_KEY) || text.includes("SUPABASE_SECRET_KEY");
    });
    expect(leaks).toEqual([]);
    // The Worker reads it from its binding at run time; its value is in no built file.
    const baked = filesUnder(join(BUILD, "server")).filter((file) =>
      readFileSync(file, "latin1").includes(SECRET_KEY),
    );
    expect(baked).toEqual([]);
  });

  it("is in no page the Worker serves, loader data and error pages included", async () => {
    for (const path of ["/", "/sign-in", "/sign-up", "/no-such-page", "/notes", "/sign-in.data"]) {
      const { body } = await get(path);
      expect(body.includes(SECRET_KEY), path).toBe(false);
    }
  });
});
