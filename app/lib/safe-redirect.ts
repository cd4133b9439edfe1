/**
 * A redirect target that came from the user (`?next=`, `redirect_to`) reduced to a same-origin
 * path, or the fallback. Rejects absolute and protocol-relative URLs (`https://evil`, `//evil`,
 * `/\evil`), control characters, and anything that would resolve to another origin.
 */
export function safeRedirectPath(target: unknown, fallback = "/"): string {
  if (typeof target !== "string" || !target.startsWith("/")) return fallback;
  if (target.startsWith("//") || target.startsWith("/\\")) return fallback;
  // biome-ignore lint/suspicious/noControlCharactersInRegex: rejecting them is the point
  if (/[\u0000-\u001f\u007f]/.test(target)) return fallback;
  const base = "http://same-origin.invalid";
  let url: URL;
  try {
    url = new URL(target, base);
  } catch {
    return fallback;
  }
  if (url.origin !== base) return fallback;
  return `${url.pathname}${url.search}${url.hash}`;
}
