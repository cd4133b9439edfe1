// The real Supabase CLI (the `supabase` devDependency, its binary from the platform package npm
// installs beside it) loads supabase/config.toml with no error and no warning. `supabase status`
// parses the config before it looks for the containers, and prints the config's errors and
// warnings to stderr; with Docker pointed at a socket that does not exist it then stops on Docker,
// so no Docker, no network and no linked project are needed. It runs on a copy of supabase/,
// because the CLI writes supabase/.temp beside the config.
import { execFile } from "node:child_process";
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, test } from "vitest";

const ROOT = fileURLToPath(new URL("../../", import.meta.url));
const CLI = join(ROOT, "node_modules", ".bin", "supabase");
const workdirs: string[] = [];
/** No update check (a network call) and no telemetry from the CLI. */
const QUIET = {
  SUPABASE_NO_UPDATE_NOTIFIER: "1",
  SUPABASE_TELEMETRY_DISABLED: "1",
  DO_NOT_TRACK: "1",
};
/** A run takes a second or two alone; more beside the other test files. */
const TIMEOUT = 60_000;

afterAll(() => {
  for (const dir of workdirs) rmSync(dir, { recursive: true, force: true });
});

/** A copy of the project's supabase/ folder, with config.toml replaced when `config` is given. */
function workdir(config?: string): string {
  const dir = mkdtempSync(join(tmpdir(), "supabase-cli-config-"));
  workdirs.push(dir);
  cpSync(join(ROOT, "supabase"), join(dir, "supabase"), { recursive: true });
  if (config !== undefined) writeFileSync(join(dir, "supabase", "config.toml"), config);
  return dir;
}

/** stderr of `supabase status` in the workdir, without the Docker failure that ends it. */
function configMessages(dir: string): Promise<string[]> {
  return new Promise((resolve, reject) => {
    execFile(
      CLI,
      ["--workdir", dir, "status"],
      {
        cwd: dir,
        env: {
          ...process.env,
          DOCKER_HOST: `unix://${join(dir, "no-docker.sock")}`,
          ...QUIET,
        },
        timeout: 60_000,
      },
      (error, _stdout, stderr) => {
        // the run must have reached Docker: a config the CLI refuses stops before it
        if (error && (error as { killed?: boolean }).killed) return reject(error);
        resolve(
          stderr
            .split("\n")
            .map((line) => line.trim())
            .filter(
              (line) =>
                line !== "" &&
                !line.includes("Cannot connect to the Docker daemon") &&
                !line.startsWith("Try rerunning the command with --debug"),
            ),
        );
      },
    );
  });
}

describe("the Supabase CLI's config loader", () => {
  test(
    "the CLI is the version the project pins",
    async () => {
      const pkg = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8"));
      const version = await new Promise<string>((resolve, reject) =>
        // in a workdir: the CLI notes its update check in supabase/.temp of the directory it runs in
        execFile(
          CLI,
          ["--version"],
          { cwd: workdir(), env: { ...process.env, ...QUIET } },
          (error, stdout) => (error ? reject(error) : resolve(stdout)),
        ),
      );
      expect(version.trim()).toBe(pkg.devDependencies.supabase);
    },
    TIMEOUT,
  );

  test(
    "loads supabase/config.toml with no error or warning",
    async () => {
      expect(await configMessages(workdir())).toEqual([]);
    },
    TIMEOUT,
  );

  test(
    "reports what it refuses or warns about (the check sees them)",
    async () => {
      const config = readFileSync(join(ROOT, "supabase", "config.toml"), "utf8");
      const old = config
        .replace(/^\[local_smtp\]$/m, "[inbucket]")
        .replace(/^(\[auth\.email\]\n)enabled = /m, "$1enable_signup = ");
      expect(old).not.toBe(config);
      const refused = await configMessages(workdir(old));
      expect(refused.join("\n")).toContain(
        "[inbucket] in supabase/config.toml is no longer supported",
      );

      const deprecated = config
        .replace(/^(\[auth\.email\]\n)enabled = /m, "$1enable_signup = ")
        .concat("\n[auth.mfa.recovery_codes]\nenroll_enabled = true\n");
      const warnings = await configMessages(workdir(deprecated));
      expect(warnings.join("\n")).toContain("auth.email.enable_signup is deprecated");
      expect(warnings.join("\n")).toContain(
        "does not recognize and ignores: auth.mfa.recovery_codes",
      );
    },
    TIMEOUT,
  );
});
