// The README's layout and public API, held against the tree and src/index.ts, so that they cannot
// drift from the code again: every path the layout names exists and every folder of src/ is named
// in it; every export of the package is in the public-API table, and the table names nothing else.
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, test } from "vitest";

const PACKAGE = fileURLToPath(new URL("../", import.meta.url));
const README = readFileSync(join(PACKAGE, "README.md"), "utf8");

/** The text of the README's section `## title`, up to the next `## `. */
function section(title: string): string {
  const start = README.indexOf(`\n## ${title}\n`);
  expect(start, `the README has a "## ${title}" section`).toBeGreaterThan(-1);
  const end = README.indexOf("\n## ", start + 1);
  return README.slice(start, end === -1 ? undefined : end);
}

/**
 * The paths the Layout section's tree names, relative to the package: one entry a line, its
 * nesting by its indent (two spaces a level), its description after it; lines indented further
 * (12 spaces or more) carry on a description.
 */
function layoutPaths(text: string): string[] {
  const tree = /```\n([\s\S]*?)```/.exec(text)?.[1] ?? "";
  const parents: string[] = [];
  const paths: string[] = [];
  for (const line of tree.split("\n")) {
    const match = /^( *)(\S+)/.exec(line);
    if (!match) continue;
    const [, indent, name] = match as unknown as [string, string, string];
    if (indent.length >= 12 || indent.length % 2 !== 0) continue;
    if (!/^[\w.-]+(\/[\w.-]+)*\/?$/.test(name)) continue;
    const depth = indent.length / 2;
    parents.length = depth;
    const path = [...parents, name].join("");
    paths.push(path);
    if (name.endsWith("/")) parents[depth] = name;
  }
  return paths;
}

/** Every folder below `dir` (relative to the package, each with a trailing slash). */
function folders(dir: string): string[] {
  return readdirSync(join(PACKAGE, dir), { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .flatMap((entry) => [`${dir}${entry.name}/`, ...folders(`${dir}${entry.name}/`)]);
}

/** The names src/index.ts exports (`a as b` exports b). */
function indexExports(): string[] {
  const source = readFileSync(join(PACKAGE, "src", "index.ts"), "utf8");
  return [...source.matchAll(/export\s+(?:type\s+)?\{([^}]*)\}/g)].flatMap((m) =>
    (m[1] as string)
      .split(",")
      .map((name) => name.trim().replace(/^type\s+/, ""))
      .filter(Boolean)
      .map((name) => name.split(/\s+as\s+/).pop() as string),
  );
}

/** The names the Public API table's first column gives, in backquotes (`name(…)` names name). */
function tableNames(text: string): string[] {
  return text
    .split("\n")
    .filter((line) => line.startsWith("|") && !/^\|\s*-/.test(line))
    .slice(1)
    .flatMap((line) => [...(line.split("|")[1] as string).matchAll(/`([A-Za-z_]\w*)/g)])
    .map((m) => m[1] as string);
}

describe("the README's layout", () => {
  const paths = layoutPaths(section("Layout"));

  test("names only what exists", () => {
    expect(paths.length).toBeGreaterThan(30);
    expect(paths.filter((path) => !existsSync(join(PACKAGE, path)))).toEqual([]);
  });

  test("names every folder of src/", () => {
    expect(folders("src/").filter((folder) => !paths.includes(folder))).toEqual([]);
  });

  test("names every file at the top of src/ and of each subsystem folder (auth/ down to its sub-folders)", () => {
    const listed = ["src/", "src/cli/", "src/boot/", "src/project/", "src/database/"];
    listed.push("src/database/thread/", "src/http/", "src/auth/", "src/mail/", "src/provider/");
    const files = listed.flatMap((dir) =>
      readdirSync(join(PACKAGE, dir), { withFileTypes: true })
        .filter((entry) => entry.isFile())
        .map((entry) => `${dir}${entry.name}`),
    );
    expect(files.filter((file) => !paths.includes(file))).toEqual([]);
  });

  test("the reading of the tree: nesting, descriptions and their continuation lines", () => {
    const text = "```\nsrc/\n  a.ts        the a\n              a.ts again\n  b/\n    c.js  c\n```";
    expect(layoutPaths(text)).toEqual(["src/", "src/a.ts", "src/b/", "src/b/c.js"]);
  });
});

describe("the README's public API", () => {
  test("lists every export of src/index.ts, and nothing else", () => {
    const exported = indexExports();
    expect(exported.length).toBeGreaterThan(10);
    const listed = new Set(tableNames(section("Public API")));
    expect(exported.filter((name) => !listed.has(name))).toEqual([]);
    expect([...listed].filter((name) => !exported.includes(name))).toEqual([]);
  });
});
