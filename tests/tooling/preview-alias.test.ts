import { describe, expect, it } from "vitest";
import { previewAlias } from "../../scripts/preview-alias.ts";

describe("previewAlias", () => {
  it("keeps a plain branch name", () => {
    expect(previewAlias("login-flow")).toBe("login-flow");
  });

  it("lowercases and turns every run of other characters into one dash", () => {
    expect(previewAlias("feature/Login_Flow..v2")).toBe("feature-login-flow-v2");
    expect(previewAlias("refs/heads/Fix/ÜBER bug")).toBe("fix-ber-bug");
  });

  it("starts with a letter and never ends with a dash", () => {
    expect(previewAlias("123-/hotfix")).toBe("hotfix");
    expect(previewAlias("a".repeat(31) + "/b")).toBe("a".repeat(31));
  });

  it("stays within the length a DNS label allows next to the worker name", () => {
    expect(previewAlias("x".repeat(200)).length).toBe(32);
  });

  it("falls back to a fixed alias when nothing usable is left", () => {
    expect(previewAlias("///")).toBe("preview");
    expect(previewAlias("2024")).toBe("preview");
  });
});
