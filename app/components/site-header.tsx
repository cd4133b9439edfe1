import { Link } from "react-router";
import type { SessionUser } from "../lib/session-user";

export function SiteHeader({ user }: { user: SessionUser | null }) {
  return (
    <header className="border-b border-ink-200 bg-white/80 backdrop-blur dark:border-ink-800 dark:bg-ink-900/80">
      <div className="mx-auto flex h-14 max-w-5xl items-center justify-between gap-4 px-4 sm:px-6">
        <Link to="/" className="flex items-center gap-2 font-semibold tracking-tight">
          <span
            aria-hidden="true"
            className="grid size-7 place-items-center rounded-lg bg-brand-600 text-sm text-white"
          >
            E
          </span>
          Edge Notes
        </Link>
        <p className="truncate text-sm text-ink-600 dark:text-ink-400">
          {user ? (
            <>
              <span className="sr-only">Signed in as </span>
              <span className="font-medium text-ink-800 dark:text-ink-100">
                {user.email ?? "your account"}
              </span>
            </>
          ) : (
            "Not signed in"
          )}
        </p>
      </div>
    </header>
  );
}
