import { describe, expect, it } from "vitest";
import { NAME_MAX, presenceNames, presenceViewers } from "../../../app/lib/live.client";

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

describe("presenceViewers", () => {
  const ada = "8d0f5d2e-6f7e-4a39-9a43-2b8f0c7c1a11";
  const grace = "3c3c1f0e-1111-4a39-9a43-2b8f0c7c1a22";

  it("a picture only from the announcer's own folder, in the bucket's shape", () => {
    const viewers = presenceViewers([
      { key: ada, name: "Ada", avatar: `${ada}/mf1x2-ab12cd.webp` },
      // Grace announcing Ada's picture, a nested path, another type, a URL, not a string:
      { key: grace, name: "Grace", avatar: `${ada}/mf1x2-ab12cd.webp` },
      { key: grace, name: "Grace", avatar: `${grace}/a/b.webp` },
      { key: grace, name: "Grace", avatar: `${grace}/x.svg` },
      { key: grace, name: "Grace", avatar: "https://evil.example/x.webp" },
      { key: grace, name: "<b>Grace</b>", avatar: { path: "x" } },
    ]);
    expect(viewers.map((v) => v.avatarPath)).toEqual([
      `${ada}/mf1x2-ab12cd.webp`,
      null,
      null,
      null,
      null,
      null,
    ]);
    expect(viewers.at(-1)?.name).toBe("<b>Grace</b>");
  });
});
