import { Avatar } from "../../../components/avatar";
import type { AvatarSource } from "../../../lib/avatars";
import { CardLink } from "./card-links";
import type { NoteListItem } from "./data.server";
import { LeaveSharedNote } from "./leave-shared-note";
import type { ListView } from "./list-url";
import { NoteDate, ownerName, TagLink } from "./note-meta";
import { NoteToggles, type NoteTogglesOnPage, optimisticState } from "./note-toggles";

/**
 * One note in the list. Archiving from the list hides the card at once (it leaves this view);
 * if the server refuses, the card comes back with the message. No hooks: the list's
 * useNoteToggles() (`toggles`) submits and tracks every card's toggles, its useCardLinks()
 * follows the cards' links, and the list hands down where pictures come from (`avatars`) for the
 * owner of a note shared with the user.
 */
export function NoteCard({
  note,
  view,
  returnTo,
  toggles,
  avatars,
}: {
  note: NoteListItem;
  view: ListView;
  returnTo: string;
  toggles: NoteTogglesOnPage;
  avatars: AvatarSource | null;
}) {
  const shown = optimisticState(note, toggles.pending(note.id));
  const mine = view !== "shared";
  if (mine && shown.archived !== (view === "archived")) return null;
  return (
    <li
      data-testid="note-card"
      data-note-id={note.id}
      className="rounded-xl border border-line bg-surface p-4 shadow-xs"
    >
      <h2 className="min-w-0 text-base font-semibold break-words">
        <CardLink to={`/notes/${note.id}`} className="hover:text-accent hover:underline">
          {note.title}
        </CardLink>
      </h2>
      {note.excerpt ? (
        <p className="mt-1 line-clamp-2 text-sm break-words text-muted">{note.excerpt}</p>
      ) : null}
      <div className="mt-3 flex flex-wrap items-center justify-between gap-3">
        <div className="flex min-w-0 flex-wrap items-center gap-2 text-xs text-muted">
          {mine && shown.pinned ? (
            <span className="rounded-full bg-amber-100 px-2 py-0.5 font-medium text-amber-900 dark:bg-amber-950 dark:text-amber-100">
              Pinned
            </span>
          ) : null}
          {mine ? null : (
            <span className="inline-flex items-center gap-1.5" data-testid="note-owner">
              <Avatar
                source={avatars}
                path={note.owner?.avatar_path ?? null}
                name={ownerName(note.owner)}
                size={16}
              />
              {`Shared by ${ownerName(note.owner)} ·`}
            </span>
          )}
          <NoteDate iso={note.updated_at} prefix="Edited" />
          {note.tags.map((tag) => (
            <TagLink key={tag.name} name={tag.name} inCard />
          ))}
        </div>
        {mine ? (
          <NoteToggles
            id={note.id}
            title={note.title}
            shown={shown}
            returnTo={returnTo}
            watched={toggles.submitted.has(note.id)}
          />
        ) : (
          <LeaveSharedNote id={note.id} title={note.title} returnTo={returnTo} />
        )}
      </div>
    </li>
  );
}
