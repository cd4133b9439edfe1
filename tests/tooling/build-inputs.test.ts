// The test runs reuse the app's build when nothing it is made from changed (buildAppIfChanged in
// tests/support/preview.ts): the hash of its inputs must change with every one of them, or a run
// would test a stale build, and must not change with files the build never reads.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, expect, test } from "vitest";
import { buildInputsHash } from "../support/preview.ts";

let root: string;

function write(path: string, text: string) {
  const file = join(root, path);
  mkdirSync(join(file, ".."), { recursive: true });
  writeFileSync(file, text);
}

beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), "build-inputs-"));
  write("app/routes/home/index.tsx", "export default function Home() {}");
  write("public/favicon.svg", "<svg/>");
  write("vite.config.ts", "export default {}");
  write("package-lock.json", "{}");
  write("README.md", "# the app");
  write("tests/a.test.ts", "");
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

test.each([
  ["a route's source", "app/routes/home/index.tsx", "export default function Home() { return 1 }"],
  ["a new source file", "app/lib/new.ts", "export {}"],
  ["a static asset", "public/favicon.svg", "<svg></svg>"],
  ["the Vite config", "vite.config.ts", "export default { base: '/x/' }"],
  ["the Worker's config", "wrangler.toml", 'name = "edge-notes"'],
  ["the dependencies", "package-lock.json", '{"lockfileVersion":3}'],
  ["an .env file", ".env.production", "VITE_FLAG=1"],
  ["a TypeScript config", "tsconfig.json", "{}"],
])("changes with %s", (_what, path, text) => {
  const before = buildInputsHash(root);
  write(path, text);
  expect(buildInputsHash(root)).not.toBe(before);
});

test("changes with a VITE_ variable, which Vite puts into the build", () => {
  const before = buildInputsHash(root);
  process.env.VITE_BUILD_INPUTS_TEST = "1";
  try {
    expect(buildInputsHash(root)).not.toBe(before);
  } finally {
    delete process.env.VITE_BUILD_INPUTS_TEST;
  }
});

test("stays the same for files the build does not read", () => {
  const before = buildInputsHash(root);
  write("README.md", "# the app, documented");
  write("tests/a.test.ts", "test()");
  expect(buildInputsHash(root)).toBe(before);
});
