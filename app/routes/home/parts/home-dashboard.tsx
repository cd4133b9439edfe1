import { Link } from "react-router";
import type { RecentNote } from "../../notes/parts/data.server";
import { NoteDate, ownerName } from "../../notes/parts/note-meta";

/**
 * The signed-in home page: the notes edited last (each a link) and the things people come to do.
 * `recent` is null while a second factor is still owed (nothing can be read until then).
 */
export function HomeDashboard({
  email,
  userId,
  twoFactors,
  recent,
}: {
  email: string | null;
  userId: string;
  /** The session passed a second factor (aal2). */
  twoFactors: boolean;
  recent: RecentNote[] | null;
}) {
  return (
    <div>
      <section aria-labelledby="home-title">
        <h1 id="home-title" className="text-3xl font-semibold tracking-tight sm:text-4xl">
          Welcome back.
        </h1>
        <p className="mt-2 text-muted break-words" data-testid="session">
          Signed in as <span className="font-medium text-fg">{email ?? "your account"}</span>
          {twoFactors ? " · Two factors (aal2)" : null}
        </p>
        <nav aria-label="Quick actions" className="mt-6 flex flex-wrap gap-3">
          <Link
            to="/notes/new"
            className="inline-flex items-center rounded-lg bg-brand-600 px-4 py-2.5 text-sm font-medium text-white hover:bg-brand-700"
          >
            New note
          </Link>
          <Link
            to="/notes"
            data-testid="open-notes"
            className="inline-flex items-center rounded-lg border border-control px-4 py-2.5 text-sm font-medium hover:bg-subtle"
          >
            All notes
          </Link>
          <Link
            to="/account/security"
            className="inline-flex items-center rounded-lg border border-control px-4 py-2.5 text-sm font-medium hover:bg-subtle"
          >
            Account security
          </Link>
        </nav>
      </section>

      <section aria-labelledby="recent-title" className="mt-10 max-w-3xl">
        <h2 id="recent-title" className="text-lg font-semibold tracking-tight">
          Recent notes
        </h2>
        {recent === null ? (
          <p className="mt-3 text-sm text-muted">
            <Link to="/mfa" className="font-medium text-accent underline-offset-2 hover:underline">
              Enter your two-factor code
            </Link>{" "}
            to see your notes.
          </p>
        ) : recent.length === 0 ? (
          <p className="mt-3 text-sm text-muted" data-testid="no-recent-notes">
            No notes yet.{" "}
            <Link
              to="/notes/new"
              className="font-medium text-accent underline-offset-2 hover:underline"
            >
              Write your first one
            </Link>
            .
          </p>
        ) : (
          <ul className="mt-3 divide-y divide-line rounded-2xl border border-line bg-surface shadow-sm">
            {recent.map((note) => (
              <li key={note.id} data-testid="recent-note" className="p-4">
                <Link
                  to={`/notes/${note.id}`}
                  className="font-semibold break-words hover:text-accent hover:underline"
                >
                  {note.title}
                </Link>
                {note.excerpt ? (
                  <p className="mt-1 line-clamp-1 text-sm break-words text-muted">{note.excerpt}</p>
                ) : null}
                <p className="mt-1 text-xs text-muted">
                  {note.owner_id === userId ? null : `Shared by ${ownerName(note.owner)} · `}
                  <NoteDate iso={note.updated_at} prefix="Edited" />
                </p>
              </li>
            ))}
          </ul>
        )}
      </section>
    </div>
  );
}
