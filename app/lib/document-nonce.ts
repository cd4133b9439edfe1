let cached: string | undefined;

/**
 * The CSP nonce of the current document, for <Links>, <Scripts> and <ScrollRestoration> while
 * hydrating. On the server this is undefined: ServerRouter supplies the request's nonce. In the
 * browser, the nonce attribute reads as "" but the element's `nonce` property keeps the value,
 * which is also what React compares during hydration.
 */
export function documentNonce(): string | undefined {
  if (typeof document === "undefined") return undefined;
  cached ??= document.querySelector<HTMLScriptElement>("script[nonce]")?.nonce || undefined;
  return cached;
}
