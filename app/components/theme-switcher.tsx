import { Form, useLocation } from "react-router";
import { THEMES, type Theme } from "../lib/theme";

const LABELS: Record<Theme, string> = { system: "System", light: "Light", dark: "Dark" };

/**
 * System / Light / Dark: three buttons of one form that posts to /theme, which sets the cookie
 * and comes back to this page. Works without JavaScript; the pressed button is the current one.
 */
export function ThemeSwitcher({ theme }: { theme: Theme }) {
  const location = useLocation();
  return (
    <Form method="post" action="/theme" preventScrollReset>
      <fieldset className="flex items-center gap-2">
        <legend className="sr-only">Colour theme</legend>
        <span aria-hidden="true">Theme</span>
        <input type="hidden" name="returnTo" value={`${location.pathname}${location.search}`} />
        <div className="flex rounded-lg border border-control p-0.5">
          {THEMES.map((value) => (
            <button
              key={value}
              type="submit"
              name="theme"
              value={value}
              aria-pressed={value === theme}
              data-testid={`theme-${value}`}
              className="rounded-md px-2.5 py-1 font-medium text-muted hover:text-fg aria-pressed:bg-subtle aria-pressed:text-fg"
            >
              {LABELS[value]}
            </button>
          ))}
        </div>
      </fieldset>
    </Form>
  );
}
