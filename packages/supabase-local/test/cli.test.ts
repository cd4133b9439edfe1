// The `supabase-local` command (bin/supabase-local.js, then src/cli/cli.ts): start prints the status table and
// stays up, status asks a running backend, reset deletes the data. Run as a real process in a
// scratch project directory (--workdir), on a port of its own (LOCAL_BACKEND_PORT).
import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { existsSync } from "node:fs";
import { cp, mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import { exportJWK, generateKeyPair, type JWK, jwtVerify } from "jose";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { baseSnapshot, snapshotCacheDir } from "../src/database/snapshot.ts";
import { KEYS } from "../src/index.ts";
import { withBaseSnapshot } from "./support/base-snapshot.ts";
import { freePort } from "./support/ports.ts";

const CLI = fileURLToPath(new URL("../bin/supabase-local.js", import.meta.url));

let project: string;
beforeAll(async () => {
  project = await mkdtemp(join(tmpdir(), "supabase-local-cli-"));
  await mkdir(join(project, "supabase", "migrations"), { recursive: true });
  await writeFile(
    join(project, "supabase", "config.toml"),
    "[api]\nport = 54321\n[storage.s3_protocol]\nenabled = true\n",
  );
  await writeFile(
    join(project, "supabase", "migrations", "20240101000000_things.sql"),
    "create table public.things (id int primary key);",
  );
  await writeFile(join(project, "supabase", "seed.sql"), "insert into public.things values (1);");
  await withBaseSnapshot(project);
});
afterAll(async () => {
  await rm(project, { recursive: true, force: true });
});

function cli(
  args: string[],
  port: number,
  dbPort = port + 1,
  mailPort = port + 2,
  workdir = project,
) {
  return spawn(process.execPath, [CLI, ...args, "--workdir", workdir], {
    env: {
      ...process.env,
      LOCAL_BACKEND_PORT: String(port),
      LOCAL_BACKEND_DB_PORT: String(dbPort),
      LOCAL_BACKEND_MAILPIT_PORT: String(mailPort),
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
}

/** Runs the command to its end: exit code and what it printed (killed after 30 s, and said so). */
function run(
  args: string[],
  port: number,
  dbPort?: number,
  mailPort?: number,
  workdir?: string,
): Promise<{ code: number | null; out: string }> {
  const child = cli(args, port, dbPort, mailPort, workdir);
  let out = "";
  child.stdout?.on("data", (chunk) => (out += chunk));
  child.stderr?.on("data", (chunk) => (out += chunk));
  const deadline = setTimeout(() => {
    out += `\n(${args.join(" ")} still running after 30 s: killed)`;
    child.kill("SIGKILL");
  }, 30_000);
  return new Promise((resolve) =>
    child.on("close", (code) => {
      clearTimeout(deadline);
      resolve({ code, out });
    }),
  );
}

/** A command that keeps running (start): what it printed so far, waiting for a line, stopping it. */
function running(child: ChildProcess) {
  let out = "";
  child.stdout?.on("data", (chunk) => (out += chunk));
  child.stderr?.on("data", (chunk) => (out += chunk));
  const exited = () => child.exitCode !== null || child.signalCode !== null;
  const closed = new Promise<number | null>((resolve) => child.once("close", resolve));
  return {
    output: () => out,
    /**
     * Resolves with the output once it holds `text`; rejects, with the output, if the command ends
     * first or has not printed it within 45 s (well inside the test's own timeout).
     */
    printed: (text: string) =>
      new Promise<string>((resolve, reject) => {
        const check = () => out.includes(text) && resolve(out);
        child.stdout?.on("data", check);
        check();
        closed.then((code) => reject(new Error(`exited (${code}) before printing:\n${out}`)));
        setTimeout(
          () => reject(new Error(`had not printed "${text}" after 45 s; it printed:\n${out}`)),
          45_000,
        ).unref();
      }),
    /**
     * SIGTERM, then the exit code. A command that had already ended answers at once, with what it
     * printed, and one still running 20 s later is killed and reported: a test fails saying where
     * instead of waiting for its timeout.
     */
    stop: async (): Promise<number | null> => {
      if (exited()) throw new Error(`it had already exited (${child.exitCode}):\n${out}`);
      child.kill("SIGTERM");
      const code = await Promise.race([closed, sleep(20_000).then(() => "still running" as const)]);
      if (code !== "still running") return code;
      child.kill("SIGKILL");
      throw new Error(`still running 20 s after SIGTERM; it printed:\n${out}`);
    },
  };
}

/** The value of a row of the status table ("   Label: value"). */
function row(table: string, label: string): string | undefined {
  return new RegExp(`^ *${label}: (.*)$`, "m").exec(table)?.[1];
}

describe("supabase-local", () => {
  test("start prints the status table, serves the project, and stays up; status agrees", async () => {
    const [port, dbPort, mailPort] = [await freePort(), await freePort(), await freePort()];
    const url = `http://127.0.0.1:${port}`;
    const start = running(cli(["start"], port, dbPort, mailPort));
    try {
      const out = await start.printed("Press Ctrl-C to stop.");
      expect(row(out, "API URL")).toBe(url);
      expect(row(out, "Inbox URL")).toBe(`${url}/inbox`);
      const realtimeUrl = `ws://127.0.0.1:${port}/realtime/v1`;
      expect(row(out, "Realtime URL")).toBe(realtimeUrl);
      // the socket answers there (the key in the URL, as realtime-js sends it)
      const socket = new WebSocket(`${realtimeUrl}/websocket?apikey=${KEYS.publishable}&vsn=2.0.0`);
      await new Promise((resolve, reject) => {
        socket.onopen = resolve;
        socket.onerror = reject;
      });
      socket.close();
      // Storage answers at its URL (the bucket list, through the gateway like every API)
      expect(row(out, "Storage URL")).toBe(`${url}/storage/v1`);
      const buckets = await fetch(`${url}/storage/v1/bucket`, {
        headers: { apikey: KEYS.secret },
      });
      expect(buckets.status).toBe(200);
      expect(Array.isArray(await buckets.json())).toBe(true);
      const mailpitUrl = `http://127.0.0.1:${mailPort}`;
      expect(row(out, "Mailpit URL")).toBe(mailpitUrl);
      expect((await fetch(`${mailpitUrl}/api/v1/messages`)).status).toBe(200);
      const dbUrl = `postgresql://postgres:postgres@127.0.0.1:${dbPort}/postgres`;
      expect(row(out, "DB URL")).toBe(dbUrl);
      expect(row(out, "Studio URL")).toMatch(/^none/);
      expect(row(out, "Publishable key")).toBe(KEYS.publishable);
      expect(row(out, "Secret key")).toBe(KEYS.secret);
      expect(row(out, "JWT secret")).toBe(KEYS.jwtSecret);
      expect(row(out, "anon key")).toBe(KEYS.anon);
      expect(row(out, "service_role key")).toBe(KEYS.serviceRole);
      // the S3 rows, as `supabase status` prints them with [storage.s3_protocol] on; it answers
      // there (an unsigned request: S3's refusal, in XML)
      expect(row(out, "S3 Storage URL")).toBe(`${url}/storage/v1/s3`);
      expect(row(out, "S3 Access Key")).toBe("625729a08b95bf1b7ff351a663f3a23c");
      expect(row(out, "S3 Region")).toBe("local");
      const s3 = await fetch(`${url}/storage/v1/s3/`);
      expect(s3.status).toBe(403);
      expect(await s3.text()).toContain("<Code>AccessDenied</Code>");

      // The project's migration and seed, from --workdir, not from the package's own folder.
      const things = await fetch(`${url}/rest/v1/things`, {
        headers: { apikey: KEYS.secret },
      });
      expect(things.status).toBe(200);
      expect(await things.json()).toEqual([{ id: 1 }]);
      // and the same database on the printed DB URL
      const client = new pg.Client({ connectionString: dbUrl });
      await client.connect();
      const { rows } = await client.query("select id from public.things");
      await client.end();
      expect(rows).toEqual([{ id: 1 }]);
      expect(existsSync(join(project, ".local-data", "signing-key.json"))).toBe(true);

      const status = await run(["status"], port, dbPort, mailPort);
      expect(status.code).toBe(0);
      expect(row(status.out, "API URL")).toBe(url);
      expect(row(status.out, "DB URL")).toBe(dbUrl);
      expect(row(status.out, "Mailpit URL")).toBe(mailpitUrl);
      expect(row(status.out, "anon key")).toBe(KEYS.anon);
      expect(row(status.out, "S3 Secret Key")).toBe(
        "850181e4652dd023b7a98c58ae0d2d34bd487ee0cc3254aed6eda37307425907",
      );
    } catch (error) {
      console.error(`supabase-local start printed:\n${start.output()}`);
      await start.stop().catch(() => {});
      throw error;
    }
    expect(await start.stop()).toBe(0);
  }, 90_000);

  test("start refuses a port another program holds in a sentence naming it, and exits 1", async () => {
    const [port, dbPort, mailPort] = [await freePort(), await freePort(), await freePort()];
    const holder = createServer().listen(dbPort, "127.0.0.1");
    await once(holder, "listening");
    try {
      const result = await run(["start"], port, dbPort, mailPort);
      expect(result.code).toBe(1);
      expect(result.out).toBe(
        `The local backend could not start: listen EADDRINUSE: address already in use 127.0.0.1:${dbPort}. Is another local backend (supabase-local start, npm run local, supabase start) or a Postgres running? Stop it, or change the port in supabase/config.toml.\n`,
      );
      // nothing was left listening on the other ports
      for (const free of [port, mailPort]) {
        const probe = createServer().listen(free, "127.0.0.1");
        await once(probe, "listening");
        probe.close();
      }
    } finally {
      holder.close();
    }
  }, 60_000);

  test("status says so and exits 1 when nothing runs on the port", async () => {
    const result = await run(["status"], await freePort());
    expect(result.code).toBe(1);
    expect(result.out).toMatch(/No local backend answers on http:\/\/127\.0\.0\.1:\d+/);
    expect(row(result.out, "API URL")).toBeUndefined();
  });

  test("reset deletes the project's .local-data", async () => {
    await mkdir(join(project, ".local-data"), { recursive: true });
    await writeFile(join(project, ".local-data", "signing-key.json"), "{}");
    const result = await run(["reset"], await freePort());
    expect(result.code).toBe(0);
    expect(result.out).toContain(join(project, ".local-data"));
    expect(existsSync(join(project, ".local-data"))).toBe(false);
  });

  test("start and status refuse a config.toml that is not TOML in a sentence, and exit 1", async () => {
    const dir = await mkdtemp(join(tmpdir(), "supabase-local-cli-toml-"));
    try {
      await mkdir(join(dir, "supabase"), { recursive: true });
      const file = join(dir, "supabase", "config.toml");
      await writeFile(file, "[api]\nport = = 54321\n");
      for (const command of ["start", "status"]) {
        const result = await run([command], await freePort(), undefined, undefined, dir);
        expect(result.code).toBe(1);
        expect(result.out.startsWith(`failed to parse config: ${file}: `)).toBe(true);
        expect(result.out).toContain("2:  port = = 54321");
        expect(result.out).not.toMatch(/^\s+at /m); // no stack trace
      }
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  test("start refuses a database that will not open in a sentence, naming it and the way out", async () => {
    const dir = await mkdtemp(join(tmpdir(), "supabase-local-cli-damaged-"));
    try {
      // a project whose .local-data holds a database, with its control file overwritten
      const dataDir = join(dir, ".local-data");
      await cp(await baseSnapshot(snapshotCacheDir(process.cwd())), dataDir, { recursive: true });
      await writeFile(join(dataDir, "global", "pg_control"), Buffer.alloc(8192, 0x5a));
      const result = await run(["start"], await freePort(), undefined, undefined, dir);
      expect(result.code).toBe(1);
      expect(result.out.startsWith(`The database in ${dataDir} could not be opened: `)).toBe(true);
      expect(result.out).toContain("`supabase-local reset`");
      expect(result.out).not.toMatch(/^\s+at /m); // no stack trace
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }, 60_000);

  test("start refuses a migration that fails in a sentence: its file, line and Postgres' message", async () => {
    const dir = await mkdtemp(join(tmpdir(), "supabase-local-cli-migration-"));
    try {
      await mkdir(join(dir, "supabase", "migrations"), { recursive: true });
      await writeFile(
        join(dir, "supabase", "migrations", "20240101000000_broken.sql"),
        "create table public.u (\n  id int primary key,\n  nope notatype\n);\n",
      );
      await withBaseSnapshot(dir);
      const result = await run(["start"], await freePort(), undefined, undefined, dir);
      expect(result.code).toBe(1);
      expect(result.out).toMatch(
        /^Could not apply \S*20240101000000_broken\.sql:3: type "notatype" does not exist\n$/,
      );
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }, 60_000);

  test("a port variable that is not a port, or a --workdir that does not exist, is refused in a sentence", async () => {
    for (const [name, value] of [
      ["LOCAL_BACKEND_PORT", "abc"],
      ["LOCAL_BACKEND_DB_PORT", "99999"],
      ["LOCAL_BACKEND_MAILPIT_PORT", "-1"],
    ] as const) {
      const child = spawn(process.execPath, [CLI, "status", "--workdir", project], {
        env: { ...process.env, [name]: value },
        stdio: ["ignore", "pipe", "pipe"],
      });
      let out = "";
      child.stdout?.on("data", (chunk) => (out += chunk));
      child.stderr?.on("data", (chunk) => (out += chunk));
      const code = await new Promise((resolve) => child.on("close", resolve));
      expect({ code, out }).toEqual({
        code: 1,
        out: `${name} must be a port number (0 to 65535), not "${value}"\n`,
      });
    }
    const nowhere = join(project, "no-such-dir");
    const result = await run(["start"], await freePort(), undefined, undefined, nowhere);
    expect(result).toEqual({ code: 1, out: `--workdir ${nowhere}: no such directory\n` });
    expect(existsSync(nowhere)).toBe(false); // and nothing made there
  });

  test("an unknown command prints the usage and exits 2", async () => {
    const result = await run(["launch"], await freePort());
    expect(result.code).toBe(2);
    expect(result.out).toContain("Usage: supabase-local <start|status|reset>");
  });

  describe("with [auth] signing_keys_path", () => {
    /** A scratch project whose signing_keys.json holds `keys` (as `supabase gen signing-key` writes). */
    async function keyProject(keys: JWK[]): Promise<string> {
      const dir = await mkdtemp(join(tmpdir(), "supabase-local-cli-keys-"));
      await mkdir(join(dir, "supabase"), { recursive: true });
      await writeFile(join(dir, "supabase", "signing_keys.json"), JSON.stringify(keys));
      await writeFile(
        join(dir, "supabase", "config.toml"),
        '[auth]\nsigning_keys_path = "./signing_keys.json"\n',
      );
      return dir;
    }
    async function cliKey(): Promise<JWK> {
      const { privateKey } = await generateKeyPair("ES256", { extractable: true });
      const jwk = await exportJWK(privateKey);
      return {
        ...jwk,
        kid: crypto.randomUUID(),
        use: "sig",
        key_ops: ["sign", "verify"],
        alg: "ES256",
      };
    }

    test("start refuses a file with several signing keys, naming it, as Auth refuses to start", async () => {
      const dir = await keyProject([await cliKey(), await cliKey()]);
      try {
        const result = await run(["start"], await freePort(), undefined, undefined, dir);
        expect(result.code).toBe(1);
        expect(result.out.trim()).toBe(
          `Invalid signing keys in ${join(dir, "supabase", "signing_keys.json")}: multiple signing keys detected, only 1 signing key is supported (Auth signs with the one key whose key_ops include "sign"; give the others key_ops ["verify"])`,
        );
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
    });

    test("status signs the anon and service_role keys afresh with the file's first key, as `supabase status` does", async () => {
      const key = await cliKey();
      const dir = await keyProject([key]);
      await withBaseSnapshot(dir);
      const [port, dbPort, mailPort] = [await freePort(), await freePort(), await freePort()];
      const start = running(cli(["start"], port, dbPort, mailPort, dir));
      try {
        const started = await start.printed("Press Ctrl-C to stop.");
        const status = await run(["status"], port, dbPort, mailPort, dir);
        expect(status.code).toBe(0);
        const { importJWK } = await import("jose");
        const publicKey = await importJWK(
          { kty: key.kty, crv: key.crv, x: key.x, y: key.y },
          "ES256",
        );
        for (const out of [started, status.out]) {
          for (const role of ["anon", "service_role"]) {
            const jwt = row(out, `${role} key`) ?? "";
            const { payload, protectedHeader } = await jwtVerify(jwt, publicKey);
            expect(protectedHeader).toEqual({ alg: "ES256", kid: key.kid, typ: "JWT" });
            expect(payload).toEqual({ iss: "supabase-demo", role, exp: expect.any(Number) });
            const tenYears = 10 * 365 * 24 * 3600;
            expect(payload.exp).toBeGreaterThan(Date.now() / 1000 + tenYears - 120);
          }
        }
        // the running backend takes the key status printed
        const health = await fetch(`http://127.0.0.1:${port}/auth/v1/admin/users?per_page=1`, {
          headers: { apikey: row(status.out, "service_role key") ?? "" },
          signal: AbortSignal.timeout(15_000),
        });
        expect(health.status).toBe(200);
        expect(await start.stop()).toBe(0);
      } catch (error) {
        console.error(`supabase-local start printed:\n${start.output()}`);
        await start.stop().catch(() => {});
        throw error;
      } finally {
        await rm(dir, { recursive: true, force: true });
      }
    }, 90_000);
  });
});
