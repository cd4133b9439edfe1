// The TypeScript cache (src/boot/typescript-cache.js), in real Node processes started in a scratch
// project with it imported first, as the command line does: a module loads from the cache once
// it has been stripped, an edit is never hidden by an old entry, and what Node refuses to load
// it still refuses, with Node's own error.
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, beforeAll, describe, expect, test } from "vitest";

const HOOK = fileURLToPath(new URL("../src/boot/typescript-cache.js", import.meta.url));

let project: string;
let cache: string;
beforeAll(() => {
  project = mkdtempSync(join(tmpdir(), "typescript-cache-"));
  writeFileSync(join(project, "package.json"), '{ "type": "module" }');
  mkdirSync(join(project, "node_modules"));
  cache = join(project, "node_modules", ".cache", "supabase-local", "typescript");
});
afterAll(() => {
  rmSync(project, { recursive: true, force: true });
});

/** Imports `module` (relative to the project) in a new Node process with the cache in place. */
function load(module: string, withCache = true) {
  const script = `const m = await import(${JSON.stringify(`./${module}`)}); console.log(JSON.stringify(m.value));`;
  const result = spawnSync(
    process.execPath,
    [...(withCache ? ["--import", HOOK] : []), "--input-type=module", "--eval", script],
    { cwd: project, encoding: "utf8" },
  );
  return { status: result.status, stdout: result.stdout.trim(), stderr: result.stderr };
}

function entries(): string[] {
  try {
    return readdirSync(cache).map((name) => join(cache, name));
  } catch {
    return [];
  }
}

describe("the TypeScript cache", () => {
  test("a module's stripped JavaScript is kept and loaded from the cache next time", () => {
    writeFileSync(join(project, "value.ts"), "export const value: number = 1 as number;\n");
    expect(load("value.ts")).toEqual({ status: 0, stdout: "1", stderr: "" });
    const [entry, ...others] = entries();
    expect(others).toEqual([]);
    const text = readFileSync(entry as string, "utf8");
    // the stamp, then the module with its types blanked out: same lines, same columns
    expect(text).toMatch(/^\/\/ [0-9a-f]{64}\nexport const value {9}= 1 {10};\n$/);

    // The next load reads the entry, not the file: an entry changed behind the cache's back
    // (keeping its stamp) is what runs.
    writeFileSync(entry as string, text.replace("= 1", "= 7"));
    expect(load("value.ts").stdout).toBe("7");
  });

  test("an edited module misses: the edit runs, and its entry replaces the old one", () => {
    writeFileSync(join(project, "edited.ts"), "export const value: string = 'before';\n");
    expect(load("edited.ts").stdout).toBe('"before"');
    const before = new Set(entries());
    writeFileSync(join(project, "edited.ts"), "export const value: string = 'after';\n");
    expect(load("edited.ts").stdout).toBe('"after"');
    // one entry per file, rewritten in place
    expect(new Set(entries())).toEqual(before);
  });

  test("what the stripper rejects fails as Node fails it, and nothing is cached", () => {
    writeFileSync(
      join(project, "enum.ts"),
      "enum Color { Red }\nexport const value = Color.Red;\n",
    );
    const count = entries().length;
    const withCache = load("enum.ts");
    const without = load("enum.ts", false);
    expect(without.status).not.toBe(0);
    expect(without.stderr).toContain("ERR_UNSUPPORTED_TYPESCRIPT_SYNTAX");
    expect(withCache.status).toBe(without.status);
    expect(withCache.stderr).toContain("ERR_UNSUPPORTED_TYPESCRIPT_SYNTAX");
    expect(entries()).toHaveLength(count);
  });

  test("TypeScript under node_modules is still refused, as Node refuses it", () => {
    const dependency = join(project, "node_modules", "typed");
    mkdirSync(dependency, { recursive: true });
    writeFileSync(join(dependency, "package.json"), '{ "type": "module" }');
    writeFileSync(join(dependency, "index.ts"), "export const value: number = 1;\n");
    const count = entries().length;
    const result = load("node_modules/typed/index.ts");
    expect(result.status).not.toBe(0);
    expect(result.stderr).toContain("ERR_UNSUPPORTED_NODE_MODULES_TYPE_STRIPPING");
    expect(entries()).toHaveLength(count);
  });
});
