import { describe, expect, it } from "vitest";
import { NAME_MAX, presenceNames } from "../../../app/lib/live.client";

// Presence payloads are whatever another browser sent: the page shows them as capped plain text.
describe("presenceNames", () => {
  it("keeps ordinary names as they are, markup included (React renders it as text)", () => {
    expect(presenceNames(["Grace", "Ada Lovelace", "<b>Alan</b>"])).toEqual([
      "Grace",
      "Ada Lovelace",
      "<b>Alan</b>",
    ]);
  });

  it("caps a name at NAME_MAX characters, counting characters, not UTF-16 units", () => {
    const [long] = presenceNames(["x".repeat(500)]);
    expect(long).toBe(`${"x".repeat(NAME_MAX - 1)}…`);
    const [emoji] = presenceNames(["🙂".repeat(NAME_MAX)]);
    expect([...(emoji ?? "")]).toHaveLength(NAME_MAX);
  });

  it("removes control and invisible formatting characters, collapses whitespace", () => {
    expect(presenceNames(["Gr\u0000ace\n\n  H\u202eopper\u2028!"])).toEqual(["Gr ace H opper !"]);
  });

  it("anything that is not a name is 'Someone'", () => {
    expect(presenceNames([undefined, null, 42, { name: "x" }, ["Grace"], "", "   "])).toEqual(
      Array(7).fill("Someone"),
    );
  });
});
