import type { SupabaseClient } from "@supabase/supabase-js";
import { AVATAR_BUCKET } from "../../../lib/avatars";
import type { StorageCalls } from "../../../lib/storage.server";
import { AVATAR_MAX_BYTES, type AvatarError, avatarProblem, newAvatarPath } from "./avatar-rules";
import { withoutMetadata } from "./image-metadata.server";

/**
 * A user's picture (decisions 036, 037): the bytes in the public `avatars` bucket under a new name
 * per version, which one is current in their profile (`avatar_path`, what others are shown) and,
 * for the header, in their metadata. All as the user: Storage's and the profile's RLS decide.
 *
 * A version's objects are cached for an hour where they are served: names change with every new
 * picture, and a removed one is gone from caches within the hour.
 */
const CACHE_CONTROL = "max-age=3600";

/**
 * Stores `file` without its metadata as the user's new picture, makes it current, then removes
 * the versions before it. The result is what went wrong, or null.
 */
export async function saveAvatar(
  supabase: SupabaseClient,
  storage: StorageCalls,
  userId: string,
  file: File | null,
): Promise<AvatarError | null> {
  const problem = avatarProblem(file);
  if (problem || !file) return problem ?? "no_file";
  const clean = withoutMetadata(new Uint8Array(await file.arrayBuffer()));
  if (!clean) return "not_an_image";
  const path = newAvatarPath(userId, clean.type);
  const body = new Blob([clean.bytes as Uint8Array<ArrayBuffer>], { type: clean.type });
  const uploaded = await storage.upload(AVATAR_BUCKET, path, body, clean.type, {
    cacheControl: CACHE_CONTROL,
  });
  if (!uploaded.ok) {
    // The bucket's own limits answer too (a size or type the browser misreported).
    if (/size/i.test(uploaded.message ?? "") || clean.bytes.length > AVATAR_MAX_BYTES) {
      return "too_big";
    }
    if (/mime type/i.test(uploaded.message ?? "")) return "bad_type";
    return "not_stored";
  }
  const named = await makeCurrent(supabase, userId, path);
  if (named !== "current") {
    // Not named: take it back. Unknown (the database did not answer): leave it, the next change
    // removes it if it is not the current one.
    if (named === "not current") await storage.remove(AVATAR_BUCKET, [path]);
    return "not_stored";
  }
  await removeVersions(storage, userId, path);
  return null;
}

/** No picture any more: unnamed first (pages stop naming it), then every version removed. */
export async function removeAvatar(
  supabase: SupabaseClient,
  storage: StorageCalls,
  userId: string,
): Promise<boolean> {
  if ((await makeCurrent(supabase, userId, null)) !== "current") return false;
  await removeVersions(storage, userId, null);
  return true;
}

/**
 * Names `path` as the user's picture: first in their profile, as the user (RLS: aal2 once they
 * have a factor), which is what everyone else is shown; then in their metadata, the header's own
 * copy, and refreshes the session so that the access token, which the header reads its picture
 * from, carries it at once (the cookies go out with the answer). A refused or timed-out profile
 * update may still have been saved (the Worker gives up on a slow backend): then the profile is
 * read back to know. A refused metadata update leaves the header's picture as it was.
 */
async function makeCurrent(
  supabase: SupabaseClient,
  userId: string,
  path: string | null,
): Promise<"current" | "not current" | "unknown"> {
  const { data: updated, error } = await supabase
    .from("profiles")
    .update({ avatar_path: path })
    .eq("id", userId)
    .select("avatar_path");
  if (error) {
    const { data, error: readError } = await supabase
      .from("profiles")
      .select("avatar_path")
      .eq("id", userId)
      .maybeSingle();
    if (readError) return "unknown";
    if ((data?.avatar_path ?? null) !== path) return "not current";
  } else if (updated?.length !== 1) {
    return "not current";
  }
  const named = await supabase.auth.updateUser({ data: { avatar_path: path } });
  if (!named.error) await supabase.auth.refreshSession();
  return "current";
}

/**
 * Removes the user's pictures but `keep`, through the Storage API (upstream forbids deleting
 * objects in SQL). A failure leaves an old version behind; the next change removes it.
 */
async function removeVersions(storage: StorageCalls, userId: string, keep: string | null) {
  const listed = await storage.list(AVATAR_BUCKET, `${userId}/`);
  const old = (listed ?? [])
    .filter((item) => !item.folder)
    .map((item) => `${userId}/${item.name}`)
    .filter((path) => path !== keep);
  if (old.length > 0) await storage.remove(AVATAR_BUCKET, old);
}
