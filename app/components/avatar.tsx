import { useState } from "react";
import type { AvatarSource } from "../lib/avatars";

/**
 * A person's picture, `size` CSS pixels round, or their initials when they have none (or it
 * cannot be loaded: another device may still name a version that was replaced). Decorative: the
 * name beside it is what screen readers read.
 */
export function Avatar({
  source,
  path,
  name,
  size,
  className = "",
}: {
  source: AvatarSource | null;
  path: string | null;
  name: string;
  size: number;
  className?: string;
}) {
  const [failed, setFailed] = useState<string | null>(null);
  const box = `inline-grid shrink-0 place-items-center overflow-hidden rounded-full ${className}`;
  const style = { width: size, height: size };
  if (source && path && failed !== path) {
    return (
      <img
        src={avatarUrl(source, path, size)}
        alt=""
        width={size}
        height={size}
        style={style}
        className={`${box} bg-subtle object-cover`}
        data-testid="avatar-image"
        onError={() => setFailed(path)}
      />
    );
  }
  return (
    <span
      aria-hidden="true"
      style={{ ...style, fontSize: Math.max(8, Math.round(size * 0.4)) }}
      className={`${box} bg-accent-subtle font-semibold leading-none text-accent-strong`}
      data-testid="avatar-initials"
    >
      {initials(name)}
    </span>
  );
}

/**
 * The URL of a picture shown `size` CSS pixels square: resized (twice that, for sharp screens) by
 * Storage's image transformation where the project has it, else the original.
 */
export function avatarUrl(source: AvatarSource, path: string, size: number): string {
  const key = path.split("/").map(encodeURIComponent).join("/");
  if (!source.render) return `${source.objects}/${key}`;
  const pixels = String(size * 2);
  const query = new URLSearchParams({ width: pixels, height: pixels, resize: "cover" });
  return `${source.render}/${key}?${query}`;
}

/**
 * Up to two letters for a picture-less avatar: "Ada Lovelace" → "AL", "@grace" → "G", an email
 * address by its local part.
 */
export function initials(name: string): string {
  const words = name
    .replace(/^@/, "")
    .replace(/@.*$/, "")
    .split(/[\s._-]+/)
    .filter(Boolean);
  const letters = words.length > 1 ? [words[0], words.at(-1)] : words.slice(0, 1);
  return (
    letters
      .map((w) => [...(w ?? "")][0] ?? "")
      .join("")
      .toLocaleUpperCase() || "?"
  );
}
