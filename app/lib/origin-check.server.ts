import { NO_STORE } from "./http.server";

const SAFE_METHODS = new Set(["GET", "HEAD", "OPTIONS"]);

/**
 * Is this state-changing request from our own pages? Browsers send `Origin` on every POST (and
 * `Sec-Fetch-Site`); a value naming another site, or "null", is refused. A request with neither
 * header does not come from a browser page, so it cannot carry a victim's cookies by accident.
 * (React Router runs a similar check but answers 400 in plain text; this runs first, in the
 * Worker entry, and answers 403 with a page.)
 */
export function isCrossOrigin(request: Request): boolean {
  if (SAFE_METHODS.has(request.method.toUpperCase())) return false;
  const origin = request.headers.get("Origin");
  if (origin !== null && origin !== new URL(request.url).origin) return true;
  const site = request.headers.get("Sec-Fetch-Site");
  return site !== null && site !== "same-origin" && site !== "none";
}

/** The 403 page for a cross-origin form post: nothing ran, nothing changed. */
export function crossOriginRefusal(): Response {
  const html = `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>Request refused · Edge Notes</title></head><body>
<p>403</p><h1>Request refused</h1>
<p>This form was sent from another site, so it was refused and nothing was changed.</p>
<p>If you were using Edge Notes, open it directly and try again.</p>
<p><a href="/">Go to the home page</a></p></body></html>`;
  return new Response(html, {
    status: 403,
    headers: { "Content-Type": "text/html; charset=utf-8", "Cache-Control": NO_STORE },
  });
}
