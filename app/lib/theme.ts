/**
 * The colour theme a visitor chose: follow the system (prefers-color-scheme), or always light or
 * dark. The server reads it from a cookie and puts it on <html data-theme> in the first byte, so
 * the page never flashes the wrong scheme and no inline script is needed (app.css keys the
 * colour roles on the attribute).
 */
export const THEMES = ["system", "light", "dark"] as const;

export type Theme = (typeof THEMES)[number];

export const THEME_COOKIE = "theme";

/** A known theme, or "system" for anything else (missing, misspelt, tampered with). */
export function parseTheme(value: unknown): Theme {
  return THEMES.find((theme) => theme === value) ?? "system";
}
