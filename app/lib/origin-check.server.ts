import { data, type MiddlewareFunction } from "react-router";

const SAFE_METHODS = new Set(["GET", "HEAD", "OPTIONS"]);

/**
 * Is this state-changing request from our own pages? Browsers send `Origin` on every POST (and
 * `Sec-Fetch-Site`); a value naming another site, or "null", is refused. A request with neither
 * header does not come from a browser page, so it cannot carry a victim's cookies by accident.
 */
export function isCrossOrigin(request: Request): boolean {
  if (SAFE_METHODS.has(request.method.toUpperCase())) return false;
  const origin = request.headers.get("Origin");
  if (origin !== null && origin !== new URL(request.url).origin) return true;
  const site = request.headers.get("Sec-Fetch-Site");
  return site !== null && site !== "same-origin" && site !== "none";
}

/** Root middleware: a cross-origin form post gets 403 before any action (or auth call) runs. */
export const originCheckMiddleware: MiddlewareFunction<Response> = async ({ request }, next) => {
  if (isCrossOrigin(request)) {
    throw data(
      { message: "This form was sent from another site, so it was refused." },
      { status: 403, statusText: "Forbidden", headers: { "Cache-Control": "private, no-store" } },
    );
  }
  return next();
};
