// What Storage answers the app's question "are there image transformations?"
// (app/lib/backend-features.server.ts: a public render of an object that cannot exist, no user
// needed; tests/unit/lib/backend-features.test.ts decides from these answers): the shared test
// backend has them (supabase/config.toml turns them on) and answers the failed lookup; a backend of
// the same database with them off answers as a free hosted project, 403 FeatureNotEnabled.
import { fileURLToPath } from "node:url";
import { createLocalBackend, type LocalBackend } from "@edge-notes/supabase-local";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { workerDatabase } from "../support/memory-backend.ts";
import { BACKEND_URL, PUBLISHABLE_KEY } from "./support/app.ts";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
/** The app's probe (backend-features.server.ts). */
const PROBE = "/storage/v1/render/image/public/edge-notes-feature-probe/none.png?width=1";

let off: LocalBackend | undefined;

beforeAll(async () => {
  off = await createLocalBackend({
    projectDir: ROOT,
    db: await workerDatabase(),
    port: 0,
    host: "127.0.0.1",
    config: { storage: { imageTransformation: { enabled: false } } },
  });
}, 60_000);

afterAll(() => off?.close());

describe("the image-transformation probe's answers", () => {
  it("with them: the failed lookup (400, statusCode 404); without: 403 FeatureNotEnabled", async () => {
    const on = await fetch(`${BACKEND_URL}${PROBE}`, { headers: { apikey: PUBLISHABLE_KEY } });
    expect(on.status).toBe(400);
    expect(await on.json()).toEqual({
      statusCode: "404",
      code: "NoSuchBucket",
      error: "Bucket not found",
      message: "Bucket not found",
    });
    const without = await fetch(`${off?.url}${PROBE}`, { headers: { apikey: PUBLISHABLE_KEY } });
    expect(without.status).toBe(403);
    expect(await without.json()).toEqual({
      error: "FeatureNotEnabled",
      statusCode: "403",
      message: "feature not enabled for this tenant",
    });
  });
});
