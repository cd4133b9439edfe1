import { useRouteLoaderData } from "react-router";
import type { AvatarSource } from "./avatars";

/** Where avatars come from on this page (the root loader's answer), or null when signed out. */
export function useAvatarSource(): AvatarSource | null {
  const root = useRouteLoaderData("root") as { avatars?: AvatarSource | null } | undefined;
  return root?.avatars ?? null;
}
