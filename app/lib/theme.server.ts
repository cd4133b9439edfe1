import { parseCookieHeader, serializeCookieHeader } from "@supabase/ssr";
import { parseTheme, THEME_COOKIE, type Theme } from "./theme";

/** A year: the choice is a preference, not a session. */
const MAX_AGE_SECONDS = 365 * 24 * 60 * 60;

/** The theme the request's cookie names ("system" when there is none or it is not a theme). */
export function themeFromRequest(request: Request): Theme {
  const header = request.headers.get("Cookie");
  if (!header) return "system";
  return parseTheme(parseCookieHeader(header).find((c) => c.name === THEME_COOKIE)?.value);
}

/** Set-Cookie for a choice; "system" clears the cookie (following the system is the default). */
export function themeCookie(theme: Theme, secure: boolean): string {
  return serializeCookieHeader(THEME_COOKIE, theme === "system" ? "" : theme, {
    path: "/",
    sameSite: "lax",
    httpOnly: true,
    secure,
    maxAge: theme === "system" ? 0 : MAX_AGE_SECONDS,
  });
}
