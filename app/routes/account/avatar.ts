import { readFormData } from "../../lib/forms.server";
import { requireUser } from "../../lib/guards.server";
import { notFound, redirectNoStore } from "../../lib/http.server";
import { accessToken, storageCalls } from "../../lib/storage.server";
import { getSupabaseEnv } from "../../lib/worker-context.server";
import type { Route } from "./+types/avatar";
import { removeAvatar, saveAvatar } from "./parts/avatar.server";
import { AVATAR_MAX_BYTES, type AvatarError } from "./parts/avatar-rules";

/**
 * The profile page's picture: a new one (a multipart form post, `intent=upload`, so it works with
 * JavaScript off) or none (`intent=remove`). The answer is always a redirect back to the profile,
 * with `avatar` saying what happened (`saved`, `removed`, or what went wrong).
 */
export async function loader() {
  return redirectNoStore("/account", 302);
}

const back = (result: AvatarError | "saved" | "removed") =>
  redirectNoStore(`/account?${new URLSearchParams({ avatar: result })}#avatar`);

export async function action({ request, context }: Route.ActionArgs) {
  const { supabase, claims } = requireUser(request, context);
  // A body well over the limit is not read, or not past the limit.
  const form = await readFormData(request, AVATAR_MAX_BYTES + 64 * 1024);
  if (typeof form === "string") return back(form);
  const token = await accessToken(supabase);
  if (!token) notFound();
  const storage = storageCalls(getSupabaseEnv(context), token);
  if (form.get("intent") === "remove") {
    return back((await removeAvatar(supabase, storage, claims.sub)) ? "removed" : "not_stored");
  }
  const file = form.get("avatar");
  const failed = await saveAvatar(
    supabase,
    storage,
    claims.sub,
    file instanceof File ? file : null,
  );
  return back(failed ?? "saved");
}
