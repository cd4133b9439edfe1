/**
 * Avatars: the public bucket `avatars` (supabase/migrations/20261128002000_avatars.sql, decision
 * 036), its limits, the shape of a picture's path, and the URL a page shows it by. Used by the
 * shell (the header), the account's profile page and the notes (owners, people viewing).
 */
export const AVATAR_BUCKET = "avatars";
export const AVATAR_MAX_BYTES = 2 * 1024 * 1024;
export const AVATAR_TYPES = ["image/png", "image/jpeg", "image/webp"] as const;
export const AVATAR_RULES = "A PNG, JPEG or WebP image of up to 2 MB.";
/** What a browser with JavaScript uploads: a square of this many pixels (avatar-form.tsx). */
export const AVATAR_PIXELS = 512;

/** What went wrong with an avatar, by the code the profile page's URL carries. */
export const AVATAR_ERRORS = {
  no_file: "Choose a picture first.",
  too_big: "That picture is larger than 2 MB.",
  bad_type: "That type of file cannot be an avatar: use a PNG, JPEG or WebP image.",
  not_an_image: "That file is not a PNG, JPEG or WebP image (it may be damaged).",
  unreadable: "The form could not be read. Try again.",
  not_stored: "The picture could not be stored. Try again.",
} as const;
export type AvatarError = keyof typeof AVATAR_ERRORS;

/** The problem with a file before it is sent anywhere (the browser and the Worker both check). */
export function avatarProblem(file: { size: number; type: string } | null): AvatarError | null {
  if (!file || file.size === 0) return "no_file";
  if (file.size > AVATAR_MAX_BYTES) return "too_big";
  if (!(AVATAR_TYPES as readonly string[]).includes(file.type)) return "bad_type";
  return null;
}

const VERSION = /^[0-9a-z-]{1,64}\.(webp|jpg|png)$/;

/**
 * `path` if it is a picture of `userId`'s in the bucket's shape (`<user id>/<version>.<ext>`), else
 * null: paths come from user metadata and presence, which their owner's browser writes.
 */
export function avatarPathOf(userId: string | null | undefined, path: unknown): string | null {
  if (!userId || typeof path !== "string") return null;
  const [folder, name, ...rest] = path.split("/");
  return folder === userId && rest.length === 0 && name && VERSION.test(name) ? path : null;
}

/** A new version's path: a new name each time, so no cache shows the old picture. */
export function newAvatarPath(userId: string, type: (typeof AVATAR_TYPES)[number]): string {
  const ext = type === "image/png" ? "png" : type === "image/jpeg" ? "jpg" : "webp";
  const random = crypto.getRandomValues(new Uint8Array(6));
  const suffix = Array.from(random, (b) => b.toString(16).padStart(2, "0")).join("");
  return `${userId}/${Date.now().toString(36)}-${suffix}.${ext}`;
}

/** How the pages reach pictures: the project's URL, and whether it resizes them (a paid plan). */
export interface AvatarSource {
  supabaseUrl: string;
  transforms: boolean;
}

/**
 * The URL of a picture shown `size` CSS pixels square: resized (twice that, for sharp screens) by
 * Storage's image transformation where the project has it, else the original.
 */
export function avatarUrl(source: AvatarSource, path: string, size: number): string {
  const key = path.split("/").map(encodeURIComponent).join("/");
  if (!source.transforms) {
    return `${source.supabaseUrl}/storage/v1/object/public/${AVATAR_BUCKET}/${key}`;
  }
  const pixels = String(size * 2);
  const query = new URLSearchParams({ width: pixels, height: pixels, resize: "cover" });
  return `${source.supabaseUrl}/storage/v1/render/image/public/${AVATAR_BUCKET}/${key}?${query}`;
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
