import { describe, expect, it } from "vitest";
import {
  appPath,
  HOME,
  type SafePath,
  safeNext,
  safeRedirectPath,
} from "../../../app/lib/safe-redirect";

const APP = "https://app.example";

/** What every output must be: a path a browser keeps on our origin, and a fixed point. */
function expectSafe(out: string) {
  expect(new URL(out, APP).origin).toBe(APP);
  expect(out.startsWith("/")).toBe(true);
  expect(out).not.toMatch(/^[/\\]{2}/);
  expect(safeRedirectPath(out)).toBe(out);
}

describe("safeRedirectPath keeps the app's own paths", () => {
  it.each([
    ["/", "/"],
    ["/notes", "/notes"],
    ["/notes/42?tab=history#top", "/notes/42?tab=history#top"],
    ["/account/security?tab=2", "/account/security?tab=2"],
    ["/a/../b", "/b"],
    ["/a/./b", "/a/b"],
    ["/notes?q=%2F%2Fevil", "/notes?q=%2F%2Fevil"],
    ["/notes?next=//evil.example", "/notes?next=//evil.example"],
    ["/café", "/caf%C3%A9"],
    ["/notes?q=a b", "/notes?q=a%20b"],
  ])("%s -> %s", (target, expected) => {
    expect(safeRedirectPath(target)).toBe(expected);
    expectSafe(expected);
  });
});

/**
 * Known open-redirect payloads, written for this test after the classes of bypass collected in
 * PortSwigger's "URL validation bypass cheat sheet", the Open Redirect list in
 * swisskyrepo/PayloadsAllTheThings and OWASP's Unvalidated Redirects and Forwards cheat sheet:
 * protocol-relative and backslash forms, dot segments that collapse into `//`, single, double and
 * triple percent-encoding, characters browsers drop (tab, CR, LF), scheme tricks, userinfo (`@`)
 * and Unicode lookalikes. `expected` is "/" (the fallback) when the target is refused, or the path
 * it is harmlessly kept as.
 */
const PAYLOADS: Array<[name: string, payload: string, expected: string]> = [
  // protocol-relative and backslashes (browsers read `\` as `/` in http(s) URLs)
  ["protocol-relative", "//evil.example", "/"],
  ["three slashes", "///evil.example", "/"],
  ["four slashes", "////evil.example/", "/"],
  ["slash backslash", "/\\evil.example", "/"],
  ["two backslashes", "\\\\evil.example", "/"],
  ["backslash slash", "\\/evil.example", "/"],
  ["slash backslash slash", "/\\/evil.example", "/"],
  ["backslash only", "\\evil.example", "/"],
  // dot segments that normalise to `//`
  ["/.//", "/.//evil.example", "/"],
  ["/./\\", "/./\\evil.example", "/"],
  ["/..//", "/..//evil.example", "/"],
  ["/../\\", "/../\\evil.example", "/"],
  ["/a/..//", "/a/..//evil.example", "/"],
  ["/./../..//", "/./../..//evil.example", "/"],
  ["encoded dots", "/%2e%2e//evil.example", "/"],
  ["encoded dot", "/%2E//evil.example", "/"],
  ["/./ then encoded slash", "/./%2F/evil.example", "/"],
  // percent-encoded slashes and backslashes, once, twice and three times
  ["%2F%2F", "/%2F%2Fevil.example", "/"],
  ["%2f lower case", "/%2f%2fevil.example", "/"],
  ["%2F then slash", "/%2F/evil.example", "/"],
  ["double-encoded %252F", "/%252F%252Fevil.example", "/"],
  ["triple-encoded %25252F", "/%25252F%25252Fevil.example", "/"],
  ["%5C", "/%5Cevil.example", "/"],
  ["%5c%5c", "/%5c%5cevil.example", "/"],
  ["double-encoded %255C", "/%255Cevil.example", "/"],
  ["%2F then backslash", "/%2F\\evil.example", "/"],
  // characters browsers drop from URLs (tab, CR, LF) and other controls
  ["tab", "/\t/evil.example", "/"],
  ["encoded tab", "/%09/evil.example", "/"],
  ["newline", "/\n/evil.example", "/"],
  ["encoded newline", "/%0a/evil.example", "/"],
  ["CRLF", "/\r\n/evil.example", "/"],
  ["header splitting", "/%0d%0aSet-Cookie:x=1", "/"],
  ["NUL", "/\u0000/evil.example", "/"],
  ["leading tab", "\t//evil.example", "/"],
  ["leading space", " //evil.example", "/"],
  ["C1 control", "/\u0085/evil.example", "/"],
  // other schemes and hosts
  ["absolute https", "https://evil.example/", "/"],
  ["absolute upper case", "HTTPS://evil.example", "/"],
  ["scheme with one slash", "https:/evil.example", "/"],
  ["scheme without slashes", "http:evil.example", "/"],
  ["our host as userinfo", "https://app.example@evil.example", "/"],
  ["bare host", "evil.example", "/"],
  ["javascript:", "javascript:alert(1)", "/"],
  ["javascript: mixed case", "JaVaScRiPt:alert(1)", "/"],
  ["javascript: with a tab", "java\tscript:alert(1)", "/"],
  ["javascript: after //", "//%0Ajavascript:alert(1)", "/"],
  ["data:", "data:text/html,<script>alert(1)</script>", "/"],
  ["vbscript:", "vbscript:msgbox(1)", "/"],
  ["IPv4 as a number", "//2130706433", "/"],
  ["IPv6 literal", "//[::1]/", "/"],
  // @-authority tricks
  ["userinfo", "//user@evil.example", "/"],
  ["userinfo with password", "//user:pass@evil.example", "/"],
  ["@ alone", "@evil.example", "/"],
  ["/@ is just a path", "/@evil.example", "/@evil.example"],
  ["a scheme-looking path", "/javascript:alert(1)", "/javascript:alert(1)"],
  // Unicode lookalikes (NFKC folds the fullwidth forms to / and \)
  ["fullwidth slashes", "／／evil.example", "/"],
  ["slash + fullwidth slash", "/／evil.example", "/"],
  ["slash + fullwidth backslash", "/＼evil.example", "/"],
  ["encoded fullwidth slash", "/%EF%BC%8Fevil.example", "/"],
  ["fullwidth dots then //", "/．．//evil.example", "/"],
  // malformed
  ["empty", "", "/"],
  ["relative path", "notes", "/"],
  ["dot", ".", "/"],
  ["bad escape", "/%zz", "/"],
  ["lone percent", "/100%", "/"],
  ["too long", `/${"a".repeat(2048)}`, "/"],
];

describe("safeRedirectPath against known open-redirect payloads", () => {
  it.each(PAYLOADS)("%s (%j)", (_name, payload, expected) => {
    const out = safeRedirectPath(payload);
    expect(out).toBe(expected);
    expectSafe(out);
  });

  it("uses the given fallback for a refused target", () => {
    expect(safeRedirectPath("/.//evil.example", appPath("/notes"))).toBe("/notes");
  });

  it.each([
    ["not a string", ["/notes"]],
    ["a number", 42],
    ["null", null],
    ["missing", undefined],
  ])("falls back for %s", (_name, target) => {
    expect(safeRedirectPath(target, appPath("/home"))).toBe("/home");
  });

  // Every way of starting a path the list above draws on, combined: whatever comes out is safe.
  const starts = ["/", "/./", "/../", "/.", "/%2e/", "/a/../", "\\", "/%09", "/ "];
  const separators = [
    "/",
    "\\",
    "%2F",
    "%5C",
    "%252F",
    "%255C",
    "\t",
    "\n",
    "／",
    "＼",
    "%EF%BC%8F",
  ];
  const cases = starts.flatMap((start) =>
    separators.flatMap((a) => separators.map((b) => `${start}${a}${b}evil.example`)),
  );
  it(`${cases.length} combinations of starts and separators all stay on the origin`, () => {
    for (const target of cases) {
      const out = safeRedirectPath(target);
      expectSafe(out);
      expect(new URL(out, APP).host, target).toBe("app.example");
    }
  });
});

describe("safeNext (the edge helper for `next`)", () => {
  it("keeps a safe path, drops the home page and anything refused", () => {
    expect(safeNext("/notes?q=x")).toBe("/notes?q=x");
    expect(safeNext("/")).toBeUndefined();
    expect(safeNext("/.//evil.example")).toBeUndefined();
    expect(safeNext(undefined)).toBeUndefined();
  });
});

describe("appPath (the app's own literals)", () => {
  it("brands a safe literal and refuses one that is not", () => {
    const path: SafePath = appPath("/reset-password");
    expect(path).toBe("/reset-password");
    expect(HOME).toBe("/");
    expect(() => appPath("/.//evil.example")).toThrow(/not a safe app path/);
  });
});
