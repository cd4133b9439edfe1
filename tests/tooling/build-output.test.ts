// buildApp() (tests/support/preview.ts) fails a build that exits 0 yet prints Vite errors: every
// test run builds the app, so such a build is caught there, not in a developer's scrolled-past log.
import { expect, test } from "vitest";
import { buildErrors } from "../support/preview.ts";

// What `react-router build` printed when React Router's child compiler warmed imports it could not
// resolve (the build still succeeded), and lines of a clean build around it.
const PRE_TRANSFORM_ERROR =
  '5:37:29 AM [vite] (ssr) Pre-transform error: The file does not exist at "/work/main/node_modules/.vite-child-compiler/deps_ssr/react_jsx-runtime.js?v=77c65abc" which is in the optimize deps directory.';
const CLEAN = [
  "vite v8.3.8 building client environment for production...",
  "build/client/assets/errorBoundaries-C3xb_OJC.js         32.12 kB │ gzip: 11.29 kB",
  "build/client/assets/use-focus-first-error-FMsUksXg.js    1.56 kB │ gzip:  0.81 kB",
  "✓ built in 1.31s",
];

test("a clean build's output has no errors, though its file names may say error", () => {
  expect(buildErrors(CLEAN.join("\n"))).toEqual([]);
});

test("Vite's error lines are found, in colour too", () => {
  const coloured = PRE_TRANSFORM_ERROR.replace("[vite]", "\x1b[36m[vite]\x1b[39m");
  const output = [...CLEAN, PRE_TRANSFORM_ERROR, coloured].join("\n");
  expect(buildErrors(output)).toEqual([PRE_TRANSFORM_ERROR, coloured]);
});
