import { readFile } from "node:fs/promises";
import { expect, test } from "vitest";
import { generateDatabaseTypes, TYPES_FILE } from "../../scripts/gen-types.ts";

// The committed types are what the migrations produce: a migration without `npm run gen:types`
// (or a hand edit of the generated file) fails here.
test(`${TYPES_FILE} matches supabase/migrations (run npm run gen:types)`, async () => {
  const committed = await readFile(new URL(`../../${TYPES_FILE}`, import.meta.url), "utf8");
  expect(committed).toBe(await generateDatabaseTypes());
}, 30_000);
