// What Storage answers the app's question "are there image transformations?"
// (app/lib/backend-features.server.ts: a public render of an object that cannot exist, no user
// needed; tests/unit/lib/backend-features.test.ts decides from these answers): the shared test
// backend has them (supabase/config.toml turns them on) and answers the failed lookup; a backend of
// the same database with them off answers as a free hosted project, 403 FeatureNotEnabled. The
// built Worker against that second backend shows an attached picture's plain signed URL as its
// thumbnail (with them, a render URL: tests/integration/notes/attachments.test.ts).
import { fileURLToPath } from "node:url";
import { createLocalBackend, type LocalBackend } from "@edge-notes/supabase-local";
import { createClient } from "@supabase/supabase-js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PASSWORD, randomEmail } from "../support/backend.ts";
import { workerDatabase } from "../support/memory-backend.ts";
import { serveBuild, type WorkerServer } from "../support/workerd.ts";
import { BACKEND_URL, PUBLISHABLE_KEY, SECRET_KEY } from "./support/app.ts";
import { BrowserLess } from "./support/browser-less.ts";
import { createNote } from "./support/notes.ts";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
/** The app's probe (backend-features.server.ts). */
const PROBE = "/storage/v1/render/image/public/edge-notes-feature-probe/none.png?width=1";

const PNG = Uint8Array.from(
  atob(
    "iVBORw0KGgoAAAANSUhEUgAAAAIAAAACCAIAAAD91JpzAAAACXBIWXMAAAPoAAAD6AG1e1JrAAAAEklEQVQImWM4YSNywkaEAUIBACF+BGFPob/gAAAAAElFTkSuQmCC",
  ),
  (c) => c.charCodeAt(0),
);

let off: LocalBackend | undefined;
let app: WorkerServer | undefined;

beforeAll(async () => {
  off = await createLocalBackend({
    projectDir: ROOT,
    db: await workerDatabase(),
    port: 0,
    host: "127.0.0.1",
    config: { storage: { imageTransformation: { enabled: false } } },
  });
  app = await serveBuild({
    port: 0,
    vars: { SUPABASE_URL: off.url, SUPABASE_SECRET_KEY: SECRET_KEY },
  });
}, 60_000);

afterAll(async () => {
  await app?.stop();
  await off?.close();
});

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

describe("the app on a backend without image transformations", () => {
  it("shows a picture's thumbnail from its plain signed URL, and asks for no render URL", async () => {
    const email = randomEmail();
    const admin = createClient(off?.url ?? "", SECRET_KEY, { auth: { persistSession: false } });
    const created = await admin.auth.admin.createUser({
      email,
      password: PASSWORD,
      email_confirm: true,
    });
    if (created.error) throw created.error;
    const browser = new BrowserLess(app?.url);
    await browser.post("/sign-in", { intent: "password", email, password: PASSWORD });
    expect(browser.hasSession()).toBe(true);
    const id = await createNote(browser, { title: "Plain thumbnails" });
    const form = new FormData();
    form.set("intent", "attach");
    form.set("file", new File([PNG], "dot.png", { type: "image/png" }));
    const page = await browser.postMultipart(`/notes/${id}/attachments`, form);
    expect(page.status).toBe(200);
    const src = /<img[^>]*src="([^"]*)"/.exec(page.body)?.[1]?.replaceAll("&amp;", "&") ?? "";
    expect(src.startsWith(`${off?.url}/storage/v1/object/sign/attachments/`)).toBe(true);
    expect(page.body).not.toContain("/render/image/");
    const served = await fetch(src);
    expect(served.status).toBe(200);
    expect(new Uint8Array(await served.arrayBuffer())).toEqual(PNG);
  });
});
