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
  size: AvatarSize;
  className?: string;
}) {
  const [failed, setFailed] = useState<string | null>(null);
  const box = `inline-grid shrink-0 place-items-center overflow-hidden rounded-full ${SIZES[size]} ${className}`;
  if (source && path && failed !== path) {
    return (
      <img
        src={avatarUrl(source, path, size)}
        alt=""
        width={size}
        height={size}
        className={`${box} bg-subtle object-cover`}
        data-testid="avatar-image"
        onError={() => setFailed(path)}
      />
    );
  }
  return (
    // The letters are drawn from the attribute, not put in the text: the name beside the avatar
    // is what the line says, and reads, copies and searches as.
    <span
      aria-hidden="true"
      data-initials={initials(name)}
      className={`${box} bg-accent-subtle font-semibold leading-none text-accent-strong before:content-[attr(data-initials)]`}
      data-testid="avatar-initials"
    />
  );
}

/**
 * The sizes pages use, as classes: the CSP allows no style attributes (with JavaScript off they
 * would be dropped), so each size and its initials' type are in the stylesheet.
 */
const SIZES = {
  16: "size-4 text-[7px]",
  20: "size-5 text-[8px]",
  28: "size-7 text-[11px]",
  80: "size-20 text-3xl",
} as const;
export type AvatarSize = keyof typeof SIZES;

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
