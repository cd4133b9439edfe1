// The start snapshot (src/snapshot.ts): keyed by every input, invalidated by an edited migration or
// seed, and safe when two processes make the same one at once. A project of its own in a temporary
// directory, with a cache of its own.
import { execFile } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { mkdir, utimes, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { snapshotFor, snapshotKey } from "../src/database/snapshot.ts";
import { createLocalBackend } from "../src/index.ts";
import { withBaseSnapshot } from "./support/base-snapshot.ts";

const run = promisify(execFile);
const SNAPSHOT = new URL("../src/database/snapshot.ts", import.meta.url).pathname;

let project: string;
let cacheDir: string;
let inputs: { migrationsDir: string; seedFiles: string[] };

const MIGRATION = "20240101000000_things.sql";
const THINGS = "CREATE TABLE public.things (name text PRIMARY KEY);";

async function writeProject(files: Record<string, string | null>) {
  for (const [path, content] of Object.entries(files)) {
    const file = join(project, "supabase", path);
    if (content === null) rmSync(file, { force: true });
    else await writeFile(file, content);
  }
}

/** The things a fresh in-memory backend of the project sees, and the snapshots in the cache. */
async function freshThings(): Promise<string[]> {
  const backend = await createLocalBackend({ projectDir: project, host: false, cacheDir });
  try {
    const { rows } = await backend.db.query<{ name: string }>(
      "SELECT name FROM public.things ORDER BY name",
    );
    return rows.map((row) => row.name);
  } finally {
    await backend.close();
  }
}

beforeAll(async () => {
  project = mkdtempSync(join(tmpdir(), "snapshot-project-"));
  cacheDir = join(project, "cache");
  await mkdir(join(project, "supabase", "migrations"), { recursive: true });
  // The base (initdb, roles, auth) is the repository's: this file makes only project snapshots.
  await withBaseSnapshot(project, cacheDir);
  inputs = {
    migrationsDir: join(project, "supabase", "migrations"),
    seedFiles: [join(project, "supabase", "seed.sql")],
  };
  await writeProject({
    [`migrations/${MIGRATION}`]: THINGS,
    "seed.sql": "INSERT INTO public.things VALUES ('first');",
  });
});

afterAll(() => rmSync(project, { recursive: true, force: true }));

describe("the snapshot key", () => {
  test("changes with a migration's content or name, a new migration, and the seed", async () => {
    const keys = [await snapshotKey(inputs)];
    const next = async (files: Record<string, string | null>) => {
      await writeProject(files);
      keys.push(await snapshotKey(inputs));
    };
    await next({
      [`migrations/${MIGRATION}`]: `${THINGS}\nCOMMENT ON TABLE public.things IS 'x';`,
    });
    await next({
      [`migrations/${MIGRATION}`]: null,
      "migrations/20240101000000_renamed.sql": `${THINGS}\nCOMMENT ON TABLE public.things IS 'x';`,
    });
    await next({ "migrations/20240202000000_more.sql": "SELECT 1;" });
    await next({ "seed.sql": "INSERT INTO public.things VALUES ('second');" });
    await next({ "seed.sql": null });
    expect(new Set(keys).size).toBe(keys.length);

    // back to the first inputs: the first key again; files that are not inputs change nothing
    await writeProject({
      "migrations/20240101000000_renamed.sql": null,
      "migrations/20240202000000_more.sql": null,
      [`migrations/${MIGRATION}`]: THINGS,
      "seed.sql": "INSERT INTO public.things VALUES ('first');",
      "migrations/README.md": "not a migration",
      "config.toml": "[api]\nport = 54321\n",
    });
    expect(await snapshotKey(inputs)).toBe(keys[0]);
  });
});

describe("a fresh backend", () => {
  test("starts from the snapshot, and an edited seed or migration makes a new one", async () => {
    expect(await freshThings()).toEqual(["first"]);
    const first = projectSnapshots();
    expect(first).toEqual([await snapshotKey(inputs)]);

    await writeProject({ "seed.sql": "INSERT INTO public.things VALUES ('second');" });
    expect(await freshThings()).toEqual(["second"]);

    await writeProject({
      "migrations/20240202000000_defaults.sql":
        "INSERT INTO public.things VALUES ('from a migration');",
    });
    expect(await freshThings()).toEqual(["from a migration", "second"]);

    // one base (initdb, roles, auth) served all three
    const names = readdirSync(cacheDir);
    expect(names.filter((name) => name.startsWith("base-"))).toHaveLength(1);
    expect(projectSnapshots()).toHaveLength(3);
  }, 120_000);

  test("the cache keeps the snapshots used last, not the ones made last", async () => {
    const DEFAULTS = "migrations/20240202000000_defaults.sql";
    // back to the first inputs: their snapshot, the oldest made, is used again
    await writeProject({
      [DEFAULTS]: null,
      "seed.sql": "INSERT INTO public.things VALUES ('first');",
    });
    const first = basename(await snapshotFor(inputs, cacheDir));
    const before = projectSnapshots();
    expect(before).toHaveLength(3);
    expect(before).toContain(first);
    await usedMinutesAgo(before);

    // a fourth: the cache keeps three, and the one dropped is the one used longest ago
    const fourth = await snapshotWithSeed("fourth");
    const after = projectSnapshots();
    expect(after).toHaveLength(3);
    expect(after).toContain(first);
    expect(after).toContain(fourth);

    await writeProject({ [DEFAULTS]: "INSERT INTO public.things VALUES ('from a migration');" });
  }, 120_000);

  test("a snapshot used in the last minute stays beyond the three kept: a start may be copying it", async () => {
    const before = projectSnapshots();
    expect(before).toHaveLength(3);
    const now = new Date();
    for (const name of before) await utimes(join(cacheDir, name), now, now);

    const fifth = await snapshotWithSeed("fifth");
    expect(projectSnapshots().sort()).toEqual([...before, fifth].sort());

    // once they are over a minute old, the next one made leaves the newest three again
    await usedMinutesAgo(projectSnapshots());
    const sixth = await snapshotWithSeed("sixth");
    const after = projectSnapshots();
    expect(after).toHaveLength(3);
    expect(after).toContain(sixth);
    expect(after).toContain(fifth);
  }, 120_000);

  test("two processes making the same snapshot at once both get it whole", async () => {
    await writeProject({ "seed.sql": "INSERT INTO public.things VALUES ('raced');" });
    const script = join(project, "make-snapshot.mjs");
    await writeFile(
      script,
      `import { snapshotFor } from ${JSON.stringify(SNAPSHOT)};
      console.log(await snapshotFor(${JSON.stringify(inputs)}, ${JSON.stringify(cacheDir)}));`,
    );
    const both = await Promise.all([1, 2].map(() => run(process.execPath, [script])));
    const dirs = both.map(({ stdout }) => stdout.trim());
    expect(dirs[0]).toBe(join(cacheDir, await snapshotKey(inputs)));
    expect(dirs[1]).toBe(dirs[0]);
    // no build directory left behind, and what is in place is a working database
    expect(readdirSync(cacheDir).filter((name) => name.startsWith("."))).toEqual([]);
    expect(await snapshotFor(inputs, cacheDir)).toBe(dirs[0]);
    expect(await freshThings()).toEqual(["from a migration", "raced"]);
  }, 120_000);
});

test("a snapshot that cannot be made fails the start with the migration's error", async () => {
  await writeProject({ "migrations/20240303000000_broken.sql": "CREATE TABLE nope (;" });
  await expect(freshThings()).rejects.toThrow(/20240303000000_broken\.sql:1: syntax error/);
  writeFileSync(join(inputs.migrationsDir, "20240303000000_broken.sql"), "SELECT 1;");
  expect(readdirSync(cacheDir).filter((name) => name.startsWith("."))).toEqual([]);
}, 120_000);

/** The project snapshots in the cache (not the base, spares or build directories). */
/** The project's seed changed to insert `value`, and the snapshot made for it: its name. */
async function snapshotWithSeed(value: string): Promise<string> {
  await writeProject({ "seed.sql": `INSERT INTO public.things VALUES ('${value}');` });
  return basename(await snapshotFor(inputs, cacheDir));
}

function projectSnapshots(): string[] {
  return readdirSync(cacheDir).filter((name) => /^[0-9a-f]{32}$/.test(name));
}

/**
 * Makes these snapshots (names in `cacheDir`) look used two minutes ago and more, in the order
 * they were last used: past the minute for which the cache keeps a snapshot a start may be copying.
 */
async function usedMinutesAgo(names: string[]) {
  const byUse = names
    .map((name) => ({ name, mtime: statSync(join(cacheDir, name)).mtimeMs }))
    .sort((a, b) => a.mtime - b.mtime);
  for (const [i, { name }] of byUse.entries()) {
    const at = new Date(Date.now() - 180_000 + i * 1000);
    await utimes(join(cacheDir, name), at, at);
  }
}

describe("the spare (a persisted database started fresh again, as after a reset)", () => {
  /** A persisted backend of the project in `dataDir`, its things, and the marker files it holds. */
  async function persisted(dataDir: string) {
    const backend = await createLocalBackend({
      projectDir: project,
      host: false,
      cacheDir,
      dataDir,
    });
    const { rows } = await backend.db.query<{ name: string }>(
      "SELECT name FROM public.things ORDER BY name",
    );
    return { backend, things: rows.map((row) => row.name), moved: existsSync(join(dataDir, MARK)) };
  }
  const MARK = "from-the-spare";

  test("a fresh start leaves one; the next fresh start moves it into place, then makes another", async () => {
    await writeProject({ "migrations/20240303000000_broken.sql": null });
    const spare = `${await snapshotFor(inputs, cacheDir)}-spare`;
    rmSync(spare, { recursive: true, force: true });

    const first = await persisted(join(project, "data-1"));
    await first.backend.close(); // the spare is made by then
    expect(first.moved).toBe(false);
    expect(existsSync(join(spare, "PG_VERSION"))).toBe(true);

    // A file only the spare has shows where the next data directory's files came from.
    writeFileSync(join(spare, MARK), "");
    const second = await persisted(join(project, "data-2"));
    expect(second.moved).toBe(true);
    expect(second.things).toEqual(first.things);
    expect(existsSync(join(project, "data-2", "signing-key.json"))).toBe(true);
    await second.backend.close();
    // taken, then made again (without the mark): no claimed or half-made copy left behind
    expect(existsSync(join(spare, "PG_VERSION"))).toBe(true);
    expect(existsSync(join(spare, MARK))).toBe(false);
    expect(readdirSync(cacheDir).filter((name) => name.startsWith("."))).toEqual([]);
  }, 120_000);

  test("two fresh starts at once: one moves the spare in, the other copies, both whole", async () => {
    const spare = `${await snapshotFor(inputs, cacheDir)}-spare`;
    writeFileSync(join(spare, MARK), "");
    const both = await Promise.all([
      persisted(join(project, "data-3")),
      persisted(join(project, "data-4")),
    ]);
    await Promise.all(both.map(({ backend }) => backend.close()));
    expect(both.map(({ moved }) => moved).sort()).toEqual([false, true]);
    expect(both[0]?.things).toEqual(both[1]?.things);
    expect(both[0]?.things.length).toBeGreaterThan(0);
  }, 120_000);
});
