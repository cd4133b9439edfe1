import { Form, Link } from "react-router";
import { requireUser } from "../../lib/guards.server";
import { dataNoStore } from "../../lib/http.server";
import { useAvatarSource } from "../../lib/use-avatar-source";
import type { Route } from "./+types/index";
import { useCardLinks } from "./parts/card-links";
import { listNotes, listTags } from "./parts/data.server";
import { type ListView, listUrl } from "./parts/list-url";
import { useLiveLists } from "./parts/live";
import { NoteCard } from "./parts/note-card";
import { TagLink } from "./parts/note-meta";
import { KeepToggleOutcome, useNoteToggles } from "./parts/note-toggles";
import { PAGE_SIZE, TAG_PATTERN } from "./parts/rules";
import { listQuerySchema } from "./parts/schemas.server";

export const meta: Route.MetaFunction = ({ loaderData }) => [
  { title: `${loaderData ? HEADINGS[loaderData.view] : "Notes"} · Edge Notes` },
];

const HEADINGS: Record<ListView, string> = {
  active: "Notes",
  archived: "Archived",
  shared: "Shared with me",
};

/** A problem with the URL itself: the page still renders, with the message and a way back. */
interface Notice {
  tone: "error" | "success";
  message: string;
  link?: { href: string; label: string };
}

export async function loader({ request, context }: Route.LoaderArgs) {
  const { supabase, claims } = requireUser(request, context);
  const url = new URL(request.url);
  const {
    view,
    q,
    tag,
    page: rawPage,
  } = listQuerySchema.parse(Object.fromEntries(url.searchParams));
  const base = { view, q, tag };
  const page = Number(rawPage ?? 1);
  const pageIsValid = rawPage === undefined || /^[1-9]\d{0,5}$/.test(rawPage);
  const tagIsValid = !tag || TAG_PATTERN.test(tag);
  // The page of notes and the tag filter come in one request; a URL that is not a list asks for
  // the tags alone.
  const list =
    pageIsValid && tagIsValid
      ? await listNotes(supabase, { userId: claims.sub, ...base, page })
      : null;
  const tags = list ? list.tags : view === "shared" ? [] : await listTags(supabase);
  const reply = (payload: {
    notes?: Awaited<ReturnType<typeof listNotes>>["notes"];
    total?: number;
    page?: number;
    notice?: Notice;
    status?: number;
  }) =>
    dataNoStore(
      {
        ...base,
        tags,
        notes: payload.notes ?? [],
        total: payload.total ?? 0,
        page: payload.page ?? 1,
        pages: Math.max(1, Math.ceil((payload.total ?? 0) / PAGE_SIZE)),
        notice: payload.notice ?? (url.searchParams.has("deleted") ? DELETED : undefined),
      },
      { status: payload.status ?? 200 },
    );

  if (!pageIsValid) {
    return reply({
      status: 400,
      notice: {
        tone: "error",
        message: `“${String(rawPage).slice(0, 40)}” is not a page number. Pages are numbered from 1.`,
        link: { href: listUrl(base), label: "Go to the first page" },
      },
    });
  }
  if (!tagIsValid || !list) {
    return reply({
      status: 400,
      notice: {
        tone: "error",
        message: "That is not a tag name: tags use letters, digits, - and _.",
        link: { href: listUrl({ view, q }), label: "Show all notes" },
      },
    });
  }
  if (list.outOfRange) {
    const pages = Math.max(1, Math.ceil(list.total / PAGE_SIZE));
    return reply({
      status: 404,
      total: list.total,
      page,
      notice: {
        tone: "error",
        message: `There is no page ${page}: this list has ${pages} page${pages === 1 ? "" : "s"}.`,
        link: { href: listUrl({ ...base, page: pages }), label: "Go to the last page" },
      },
    });
  }
  return reply({ notes: list.notes, total: list.total, page });
}

const DELETED: Notice = { tone: "success", message: "The note was deleted." };

export default function Notes({ loaderData }: Route.ComponentProps) {
  const { view, q, tag, tags, notes, total, page, pages, notice } = loaderData;
  // New, edited, pinned, archived, deleted, shared and unshared notes: re-read as they happen.
  useLiveLists();
  const toggles = useNoteToggles();
  const followCardLink = useCardLinks();
  const avatars = useAvatarSource();
  const here = listUrl({ view, q, tag, page });
  const filtered = Boolean(q || tag);
  return (
    <div className="py-8 sm:py-10">
      <div className="flex flex-wrap items-center justify-between gap-4">
        <h1 className="text-3xl font-semibold tracking-tight">{HEADINGS[view]}</h1>
        <NewNoteLink />
      </div>

      <nav aria-label="Note lists" className="mt-6 border-b border-ink-200 dark:border-ink-800">
        <ul className="-mb-px flex gap-4 overflow-x-auto text-sm">
          {(Object.keys(HEADINGS) as ListView[]).map((v) => (
            <li key={v}>
              <Link
                to={listUrl({ view: v })}
                aria-current={v === view ? "page" : undefined}
                className={`inline-block border-b-2 px-1 pb-2 font-medium whitespace-nowrap ${
                  v === view
                    ? "border-brand-600 text-brand-700 dark:text-brand-300"
                    : "border-transparent text-ink-600 hover:text-ink-900 dark:text-ink-400 dark:hover:text-ink-50"
                }`}
              >
                {HEADINGS[v]}
              </Link>
            </li>
          ))}
        </ul>
      </nav>

      <Form method="get" role="search" className="mt-5 flex gap-2">
        {view !== "active" ? <input type="hidden" name="view" value={view} /> : null}
        {tag ? <input type="hidden" name="tag" value={tag} /> : null}
        <label htmlFor="notes-search" className="sr-only">
          Search notes
        </label>
        <input
          id="notes-search"
          type="search"
          name="q"
          defaultValue={q}
          maxLength={200}
          placeholder="Search notes"
          className="block w-full min-w-0 rounded-lg border border-control bg-field px-3 py-2 text-base text-fg shadow-xs placeholder:text-muted sm:text-sm"
        />
        <button
          type="submit"
          className="shrink-0 rounded-lg border border-ink-200 bg-white px-4 py-2 text-sm font-medium text-ink-800 hover:bg-ink-50 dark:border-ink-600 dark:bg-ink-800 dark:text-ink-50"
        >
          Search
        </button>
      </Form>

      {tags.length > 0 ? (
        <div className="mt-4 flex flex-wrap items-center gap-2" aria-label="Filter by tag">
          <span className="text-xs font-medium text-ink-600 dark:text-ink-400">Tags:</span>
          {tags.map((name) => (
            <TagLink key={name} name={name} active={name === tag} />
          ))}
        </div>
      ) : null}

      {filtered ? (
        <p className="mt-4 text-sm text-ink-600 dark:text-ink-400" data-testid="filter-summary">
          {`${total} note${total === 1 ? "" : "s"}${q ? ` matching “${q}”` : ""}${tag ? ` tagged #${tag}` : ""}.`}{" "}
          <Link to={listUrl({ view })} className="font-medium text-accent hover:underline">
            Clear
          </Link>
        </p>
      ) : null}

      {notice ? <NoticeBox notice={notice} /> : null}

      {[...toggles.submitted].map((id) => (
        <KeepToggleOutcome key={id} id={id} />
      ))}
      {notes.length > 0 ? (
        <ul
          className="mt-6 grid gap-3"
          data-testid="note-list"
          onSubmit={toggles.onSubmit}
          onClick={followCardLink}
        >
          {notes.map((note) => (
            <NoteCard
              key={note.id}
              note={note}
              view={view}
              returnTo={here}
              toggles={toggles}
              avatars={avatars}
            />
          ))}
        </ul>
      ) : notice?.tone === "error" ? null : (
        <EmptyState view={view} filtered={filtered} />
      )}

      {pages > 1 && !notice?.link ? (
        <nav
          aria-label="Pages"
          className="mt-8 flex items-center justify-between gap-4 text-sm"
          data-testid="pagination"
        >
          {page > 1 ? (
            <Link
              to={listUrl({ view, q, tag, page: page - 1 })}
              rel="prev"
              className="rounded-lg border border-ink-200 bg-white px-3 py-1.5 font-medium hover:bg-ink-50 dark:border-ink-600 dark:bg-ink-800"
            >
              ← Newer
            </Link>
          ) : (
            <span />
          )}
          <span className="text-ink-600 dark:text-ink-400">{`Page ${page} of ${pages}`}</span>
          {page < pages ? (
            <Link
              to={listUrl({ view, q, tag, page: page + 1 })}
              rel="next"
              className="rounded-lg border border-ink-200 bg-white px-3 py-1.5 font-medium hover:bg-ink-50 dark:border-ink-600 dark:bg-ink-800"
            >
              Older →
            </Link>
          ) : (
            <span />
          )}
        </nav>
      ) : null}
    </div>
  );
}

function NoticeBox({ notice }: { notice: Notice }) {
  const colours =
    notice.tone === "error"
      ? "border-amber-300 bg-amber-50 text-amber-900 dark:border-amber-700 dark:bg-amber-950 dark:text-amber-100"
      : "border-emerald-200 bg-emerald-50 text-emerald-900 dark:border-emerald-800 dark:bg-emerald-950 dark:text-emerald-100";
  return (
    <div
      role={notice.tone === "error" ? "alert" : "status"}
      data-testid="list-notice"
      className={`mt-6 rounded-lg border px-4 py-3 text-sm ${colours}`}
    >
      {notice.message}
      {notice.link ? (
        <>
          {" "}
          <Link to={notice.link.href} className="font-medium underline underline-offset-2">
            {notice.link.label}
          </Link>
        </>
      ) : null}
    </div>
  );
}

function EmptyState({ view, filtered }: { view: ListView; filtered: boolean }) {
  const text = filtered
    ? "No notes match. Try other words, or clear the search."
    : view === "archived"
      ? "Nothing archived. Archive a note to keep it out of your list without deleting it."
      : view === "shared"
        ? "No one has shared a note with you yet."
        : "No notes yet. Write your first one.";
  return (
    <div
      className="mt-6 rounded-xl border border-dashed border-ink-200 p-10 text-center text-sm text-ink-600 dark:border-ink-800 dark:text-ink-400"
      data-testid="empty-list"
    >
      {text}
      {view === "active" && !filtered ? (
        <div className="mt-4">
          <NewNoteLink />
        </div>
      ) : null}
    </div>
  );
}

function NewNoteLink() {
  return (
    <Link
      to="/notes/new"
      className="inline-flex items-center rounded-lg bg-brand-600 px-4 py-2 text-sm font-medium text-white hover:bg-brand-700"
    >
      New note
    </Link>
  );
}
