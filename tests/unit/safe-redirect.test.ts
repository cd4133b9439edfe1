import { describe, expect, it } from "vitest";
import { safeRedirectPath } from "../../app/lib/safe-redirect";

describe("safeRedirectPath", () => {
  it.each([
    ["/notes", "/notes"],
    ["/notes/42?tab=history#top", "/notes/42?tab=history#top"],
    ["/a/../b", "/b"],
  ])("keeps same-origin path %s", (target, expected) => {
    expect(safeRedirectPath(target)).toBe(expected);
  });

  it.each([
    ["absolute URL", "https://evil.example/"],
    ["protocol-relative", "//evil.example"],
    ["backslash trick", "/\\evil.example"],
    ["javascript:", "javascript:alert(1)"],
    ["relative path", "notes"],
    ["tab inside", "/\t/evil.example"],
    ["newline inside", "/\n/evil.example"],
    ["empty", ""],
    ["not a string", ["/notes"]],
    ["missing", undefined],
  ])("falls back for %s", (_name, target) => {
    expect(safeRedirectPath(target, "/home")).toBe("/home");
  });
});
