// Uploads the built Worker as a preview version named after a branch:
//   npm run preview:upload -- <branch> [--dry-run]
// SUPABASE_URL and SUPABASE_PUBLISHABLE_KEY from the environment, when set, become the version's
// vars, so a preview talks to the hosted project they name.
import { spawnSync } from "node:child_process";
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

console.log(`Uploading preview "${alias}" for branch ${branch}${dryRun ? " (dry run)" : ""}`);
const result = spawnSync("wrangler", wranglerArgs, { stdio: "inherit" });
process.exit(result.status ?? 1);
