import { Form, Link, NavLink, useLocation } from "react-router";
import type { AvatarSource } from "../lib/avatars";
import type { SessionUser } from "../lib/session-user";
import { Avatar } from "./avatar";

export function SiteHeader({
  user,
  avatars,
}: {
  user: SessionUser | null;
  avatars: AvatarSource | null;
}) {
  // The /sign-out page has its own buttons; one "Sign out" button per page is clearer.
  const onSignOutPage = useLocation().pathname === "/sign-out";
  return (
    <header className="border-b border-line bg-surface/80 backdrop-blur">
      <div className="mx-auto flex h-14 max-w-5xl items-center justify-between gap-3 px-4 sm:gap-4 sm:px-6">
        <Link to="/" className="flex shrink-0 items-center gap-2 font-semibold tracking-tight">
          <span
            aria-hidden="true"
            className="grid size-7 place-items-center rounded-lg bg-brand-600 text-sm text-white"
          >
            E
          </span>
          {/* Signed in on a phone, the links need the room: the logo alone stands for the name. */}
          <span className={user ? "sr-only sm:not-sr-only" : undefined}>Edge Notes</span>
        </Link>
        {user ? (
          <div className="flex min-w-0 items-center gap-2 text-sm sm:gap-3">
            <nav aria-label="Main" className="flex items-center gap-1">
              <NavLink to="/notes" className={navLinkClass}>
                Notes
              </NavLink>
              <NavLink to="/account" className={navLinkClass}>
                Account
              </NavLink>
            </nav>
            <Link to="/account" className="shrink-0 rounded-full" data-testid="header-avatar">
              <span className="sr-only">Your profile</span>
              <Avatar
                source={avatars}
                path={user.avatarPath}
                name={user.displayName || user.email || "?"}
                size={28}
              />
            </Link>
            <p className="hidden min-w-0 truncate text-muted md:block">
              <span className="sr-only">Signed in as </span>
              <span
                className="font-medium text-ink-800 dark:text-ink-100"
                data-testid="session-email"
              >
                {user.email ?? "your account"}
              </span>
            </p>
            {onSignOutPage ? null : (
              <Form method="post" action="/sign-out">
                <input type="hidden" name="scope" value="local" />
                <button
                  type="submit"
                  className="shrink-0 rounded-lg border border-ink-200 px-3 py-1.5 font-medium whitespace-nowrap text-ink-800 hover:bg-ink-50 dark:border-ink-600 dark:text-ink-100 dark:hover:bg-ink-800"
                >
                  Sign out
                </button>
              </Form>
            )}
          </div>
        ) : (
          <nav aria-label="Account" className="flex items-center gap-2 text-sm">
            <Link
              to="/sign-in"
              className="rounded-lg px-3 py-1.5 font-medium text-ink-800 hover:bg-ink-100 dark:text-ink-100 dark:hover:bg-ink-800"
            >
              Sign in
            </Link>
            <Link
              to="/sign-up"
              className="rounded-lg bg-brand-600 px-3 py-1.5 font-medium text-white hover:bg-brand-700"
            >
              Sign up
            </Link>
          </nav>
        )}
      </div>
    </header>
  );
}

function navLinkClass({ isActive }: { isActive: boolean }) {
  return `rounded-lg px-2.5 py-1.5 font-medium ${
    isActive ? "bg-subtle text-fg" : "text-muted hover:bg-subtle hover:text-fg"
  }`;
}
