// Uploads the built Worker as a preview version named after a branch:
//   npm run preview:upload -- <branch> [--dry-run]
// SUPABASE_URL and SUPABASE_PUBLISHABLE_KEY from the environment, when set, become the version's
// vars, so a preview talks to the hosted project they name; SUPABASE_SECRET_KEY, when set, its
// secret (wrangler.toml [secrets]: without it, one set on the Worker with `wrangler secret put`).
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { previewAlias } from "./preview-alias.ts";

const args = process.argv.slice(2);
const dryRun = args.includes("--dry-run");
const branch = args.find((arg) => !arg.startsWith("--")) ?? process.env.GITHUB_REF_NAME ?? "";
if (!branch) {
  console.error("usage: npm run preview:upload -- <branch> [--dry-run]");
  process.exit(2);
}

const alias = previewAlias(branch);
const wranglerArgs = [
  "versions",
  "upload",
  "--preview-alias",
  alias,
  "--message",
  `branch ${branch}`,
];
for (const name of ["SUPABASE_URL", "SUPABASE_PUBLISHABLE_KEY"]) {
  const value = process.env[name];
  if (value) wranglerArgs.push("--var", `${name}:${value}`);
}
if (dryRun) wranglerArgs.push("--dry-run", "--outdir", "dist/preview");
// (in a file of its own, never on the command line, where other processes could read it)
const secretsDir = mkdtempSync(join(tmpdir(), "preview-secrets-"));
if (process.env.SUPABASE_SECRET_KEY) {
  const file = join(secretsDir, "secrets.json");
  writeFileSync(file, JSON.stringify({ SUPABASE_SECRET_KEY: process.env.SUPABASE_SECRET_KEY }), {
    mode: 0o600,
  });
  wranglerArgs.push("--secrets-file", file);
}

console.log(`Uploading preview "${alias}" for branch ${branch}${dryRun ? " (dry run)" : ""}`);
const result = spawnSync("wrangler", wranglerArgs, { stdio: "inherit" });
rmSync(secretsDir, { recursive: true, force: true });
process.exit(result.status ?? 1);
