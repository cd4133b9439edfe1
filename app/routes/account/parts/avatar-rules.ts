/**
 * What the profile page's picture may be: the avatars bucket's limits
 * (supabase/migrations/20261128002000_avatars.sql), shared by the browser's checks and the
 * Worker's, with the messages both show.
 */
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

/** A new version's path: a new name each time, so no cache shows the old picture. */
export function newAvatarPath(userId: string, type: (typeof AVATAR_TYPES)[number]): string {
  const ext = type === "image/png" ? "png" : type === "image/jpeg" ? "jpg" : "webp";
  const random = crypto.getRandomValues(new Uint8Array(6));
  const suffix = Array.from(random, (b) => b.toString(16).padStart(2, "0")).join("");
  return `${userId}/${Date.now().toString(36)}-${suffix}.${ext}`;
}
