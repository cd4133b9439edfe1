import { describe, expect, it } from "vitest";
import { avatarUrl, initials } from "../../../app/components/avatar";
import { avatarPathOf, avatarSource } from "../../../app/lib/avatars";
import { newAvatarPath } from "../../../app/routes/account/parts/avatar-rules";

const id = "8d0f5d2e-6f7e-4a39-9a43-2b8f0c7c1a11";

describe("avatars", () => {
  it("a path is the user's own, one level down, named as versions are", () => {
    const made = newAvatarPath(id, "image/webp");
    expect(made).toMatch(new RegExp(`^${id}/[0-9a-z]+-[0-9a-f]{12}\\.webp$`));
    expect(newAvatarPath(id, "image/webp")).not.toBe(made);
    expect(avatarPathOf(id, made)).toBe(made);
    for (const bad of [
      `other/${made.split("/")[1]}`,
      `${id}/a/b.webp`,
      `${id}/../x.webp`,
      `${id}/X.webp`,
      `${id}/x.svg`,
      `${id}/`,
      42,
      null,
    ]) {
      expect(avatarPathOf(id, bad), String(bad)).toBeNull();
    }
    expect(avatarPathOf(null, made)).toBeNull();
  });

  it("resized by Storage where the project transforms images, else the original", () => {
    const path = `${id}/v1-abc.webp`;
    expect(avatarUrl(avatarSource("https://p.supabase.co", false), path, 28)).toBe(
      `https://p.supabase.co/storage/v1/object/public/avatars/${path}`,
    );
    expect(avatarUrl(avatarSource("https://p.supabase.co", true), path, 28)).toBe(
      `https://p.supabase.co/storage/v1/render/image/public/avatars/${path}?width=56&height=56&resize=cover`,
    );
  });

  it("initials: up to two letters, of the first and last word", () => {
    expect(initials("Ada Lovelace")).toBe("AL");
    expect(initials("Grace Brewster Murray Hopper")).toBe("GH");
    expect(initials("@grace_hopper")).toBe("GH");
    expect(initials("ada.lovelace@example.com")).toBe("AL");
    expect(initials("élodie")).toBe("É");
    expect(initials("🙂 smile")).toBe("🙂S");
    expect(initials("")).toBe("?");
  });
});
