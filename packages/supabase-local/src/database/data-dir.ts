// The data directory: whether one holds a database, how a fresh one gets a start snapshot's files
// (the snapshot's spare moved in, or a copy), and the scratch directory of an unnamed database.
import { randomBytes } from "node:crypto";
import { cpSync, existsSync, mkdirSync, readdirSync, renameSync, rmSync, statSync } from "node:fs";
import { mkdtemp, readdir, readFile, rename, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { basename, dirname, join } from "node:path";
import { Worker } from "node:worker_threads";

/** Whether `dataDir` holds a Postgres data directory already (PG_VERSION is initdb's first file). */
export function hasDatabase(dataDir: string): boolean {
  return existsSync(join(dataDir, "PG_VERSION"));
}

/**
 * Copies a data directory's files into `dataDir` (which may exist and hold other files, such as
 * the signing key). cpSync copies natively, several times faster than fs.promises.cp's walk; it
 * blocks this thread for a moment before anything listens for the database anyway.
 */
function copyDatabase(from: string, dataDir: string): void {
  cpSync(from, dataDir, { recursive: true, force: false, errorOnExist: false });
}

/** Copies a directory with cpSync (see copyDatabase) in a thread of its own, this one left free. */
function copyInThread(from: string, to: string): Promise<void> {
  const copy = `const { cpSync } = require("node:fs");
    const { workerData } = require("node:worker_threads");
    cpSync(workerData.from, workerData.to, { recursive: true });`;
  return new Promise((resolve, reject) => {
    const worker = new Worker(copy, { eval: true, workerData: { from, to } });
    worker.once("error", reject);
    worker.once("exit", (code) => (code === 0 ? resolve() : reject(new Error(`exit ${code}`))));
  });
}

/** Where a start snapshot's spare lives: beside it, `<snapshot>-spare`. */
export function spareOf(snapshot: string): string {
  return `${snapshot}-spare`;
}

/** A name of this process's own to rename a spare to, claiming it (snapshot.ts's prune removes
 * one left behind by a process that died). */
function claimedName(spare: string): string {
  const suffix = `${process.pid}.${randomBytes(4).toString("hex")}`;
  return join(dirname(spare), `.${basename(spare)}-claimed.${suffix}`);
}

/**
 * Removes a spare. It is claimed first, as a start that takes it claims it: removed in place, a
 * start could claim it halfway through and move in a database with files missing.
 */
export async function discardSpare(spare: string): Promise<void> {
  const claimed = claimedName(spare);
  try {
    await rename(spare, claimed);
  } catch {
    return; // none, or claimed by someone else
  }
  await rm(claimed, { recursive: true, force: true });
}

/**
 * Puts a start snapshot's files into the fresh `dataDir`. Copying them is 1,100 files created one
 * by one: 0.1 s on an idle disk, and a second or more on a VM's disk still writing out earlier
 * data. So when the snapshot has a spare (a copy made after an earlier fresh start, see
 * refillSpare) on the data directory's file system, its two dozen top-level entries are moved
 * into place instead. The spare is first claimed by renaming it, which only one process can do;
 * a process that finds none, or loses the race, copies. PG_VERSION (what makes a directory a
 * database, see hasDatabase) moves last, and files already in `dataDir` (the signing key) stay.
 */
export function provideData(snapshot: string, dataDir: string): void {
  mkdirSync(dataDir, { recursive: true });
  const claimed = claimedName(spareOf(snapshot));
  try {
    if (statSync(snapshot).dev !== statSync(dataDir).dev) throw new Error("another file system");
    renameSync(spareOf(snapshot), claimed);
  } catch {
    copyDatabase(snapshot, dataDir);
    return;
  }
  const entries = readdirSync(claimed).sort(
    (a, b) => Number(a === "PG_VERSION") - Number(b === "PG_VERSION"),
  );
  for (const entry of entries)
    if (!existsSync(join(dataDir, entry))) renameSync(join(claimed, entry), join(dataDir, entry));
  rmSync(claimed, { recursive: true, force: true });
}

/**
 * Makes the snapshot's spare, for the next fresh start to move into place (provideData), when
 * it has none and `dataDir` is on its file system (elsewhere it could not be moved). It is copied
 * once the database serves, in a thread of its own, into a directory of this process's own that
 * is renamed into place when whole (snapshot.ts's prune removes one left by a process that died).
 * A spare is 40 MB: one is kept, the most recent snapshot's (the others' are removed here).
 */
export async function refillSpare(snapshot: string, dataDir: string): Promise<void> {
  const spare = spareOf(snapshot);
  const cacheDir = dirname(snapshot);
  const building = join(
    cacheDir,
    `.${basename(spare)}.${process.pid}.${randomBytes(4).toString("hex")}`,
  );
  try {
    if (existsSync(spare) || statSync(snapshot).dev !== statSync(dataDir).dev) return;
    for (const name of await readdir(cacheDir))
      if (name.endsWith("-spare") && name !== basename(spare))
        await discardSpare(join(cacheDir, name));
    await copyInThread(snapshot, building);
    // another process's spare may have been put in place meanwhile: then this one goes
    await rename(building, spare).catch(() => {});
  } catch {
    // no spare: the next fresh start copies, as without one
  } finally {
    await rm(building, { recursive: true, force: true });
  }
}

const SCRATCH_PREFIX = "local-backend-";
export const openScratch = new Set<string>();
let removeAtExit = false;

/**
 * Where an unnamed database lives while it runs (tmpfs when the machine has one): a directory
 * with the owner's pid, removed on close, at exit, or by the next start if its process is gone.
 */
export async function scratchDirectory(): Promise<string> {
  const root = existsSync("/dev/shm") ? "/dev/shm" : tmpdir();
  await removeAbandoned(root);
  const dir = await mkdtemp(join(root, SCRATCH_PREFIX));
  await writeFile(join(dir, "owner.pid"), String(process.pid));
  if (!removeAtExit) process.once("exit", removeOpenScratch);
  removeAtExit = true;
  openScratch.add(dir);
  return dir;
}

function removeOpenScratch(): void {
  for (const dir of openScratch) rmSync(dir, { recursive: true, force: true });
  openScratch.clear();
}

async function removeAbandoned(root: string): Promise<void> {
  const names = await readdir(root).catch(() => [] as string[]);
  for (const name of names.filter((n) => n.startsWith(SCRATCH_PREFIX))) {
    const dir = join(root, name);
    const pid = Number(await readFile(join(dir, "owner.pid"), "utf8").catch(() => "NaN"));
    if (Number.isInteger(pid) && pid > 0 && !isAlive(pid))
      await rm(dir, { recursive: true, force: true });
  }
}

/** Whether process `pid` still runs (on this machine). */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}
