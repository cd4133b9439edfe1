/**
 * Avatars: the public bucket `avatars` (supabase/migrations/20261128002000_avatars.sql, decision
 * 036) and the shape of a picture's path, checked wherever a path comes from a user's browser
 * (their metadata, presence). How a page shows one is components/avatar.tsx; what may be uploaded
 * is the profile page's own (routes/account/parts/avatar-rules.ts).
 */
export const AVATAR_BUCKET = "avatars";
/** A version's file name, as the Worker makes them (routes/account/parts/avatar-rules.ts). */
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

/**
 * Where a page's avatars are fetched from: the bucket's public objects, and its resized renders
 * where the project has image transformations (a paid plan on hosted Supabase), else null.
 * Made by the root loader, so that the browser's code carries no URL of its own.
 */
export interface AvatarSource {
  objects: string;
  render: string | null;
}

export function avatarSource(supabaseUrl: string, transforms: boolean): AvatarSource {
  return {
    objects: `${supabaseUrl}/storage/v1/object/public/${AVATAR_BUCKET}`,
    render: transforms ? `${supabaseUrl}/storage/v1/render/image/public/${AVATAR_BUCKET}` : null,
  };
}
