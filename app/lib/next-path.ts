import { safeRedirectPath } from "./safe-redirect";

/** `path?next=…` (and any extra params); `next` only when it is a safe path other than "/". */
export function withNext(
  path: string,
  next: string | undefined | null,
  extra: Record<string, string> = {},
): string {
  const params = new URLSearchParams(extra);
  const safe = safeRedirectPath(next, "");
  if (safe && safe !== "/") params.set("next", safe);
  const query = params.toString();
  return query ? `${path}?${query}` : path;
}
