import type { Root } from "hast";
import { Avatar } from "../../../components/avatar";
import { FormAlert } from "../../../components/form-alert";
import type { Viewer } from "../../../lib/live.client";
import { useAvatarSource } from "../../../lib/use-avatar-source";
import { Markdown } from "./markdown";
import { NoteDate } from "./note-meta";

/**
 * "Grace is also viewing": the others on a note's page, by the names their browsers announced
 * (presence is client-asserted: plain text, capped by live.client.ts, never markup). Nothing while
 * alone, or without JavaScript. Its line is kept even then, so that someone arriving does not move
 * the page under the pointer (a click meant for a button would land beside it), and the live
 * region exists before its text does (screen readers announce changes, not insertions). Their
 * pictures (or initials) are as tall as the line, so they never change its height either.
 */
export function Viewers({ viewers }: { viewers: Viewer[] }) {
  return (
    <div className="mt-2 min-h-4 text-xs leading-4" aria-live="polite">
      {viewers.length > 0 ? <ViewersLine viewers={viewers} /> : null}
    </div>
  );
}

function ViewersLine({ viewers }: { viewers: Viewer[] }) {
  const source = useAvatarSource();
  const names = viewers.map((v) => v.name);
  const shown = names.slice(0, 3);
  const more = names.length - shown.length;
  const list =
    more > 0
      ? `${shown.join(", ")} and ${more} more`
      : shown.length > 1
        ? `${shown.slice(0, -1).join(", ")} and ${shown.at(-1)}`
        : shown[0];
  return (
    <p className="flex items-center gap-2 text-muted break-all" data-testid="viewers">
      <span aria-hidden="true" className="inline-block h-2 w-2 rounded-full bg-emerald-500" />
      <span className="flex shrink-0 -space-x-1" data-testid="viewer-avatars">
        {viewers.slice(0, 3).map((viewer, i) => (
          <Avatar
            // (the first three, in presence order: names may repeat)
            key={i}
            source={source}
            path={viewer.avatarPath}
            name={viewer.name}
            size={16}
            className="ring-1 ring-surface"
          />
        ))}
      </span>
      {`${list} ${names.length > 1 ? "are" : "is"} also viewing`}
    </p>
  );
}

/**
 * On the edit page, when the note was saved elsewhere (another tab, another device) after the
 * form was opened: what is being typed stays; saving it will be refused as a conflict and show
 * both. A plain link loads the saved version instead.
 */
export function ChangedElsewhere({ reloadTo }: { reloadTo: string }) {
  return (
    <div
      role="status"
      className="rounded-lg border border-amber-200 bg-amber-50 px-3 py-2.5 text-sm text-amber-900 dark:border-amber-800 dark:bg-amber-950 dark:text-amber-100"
      data-testid="changed-elsewhere"
    >
      This note was saved somewhere else after you opened it. Your text below is kept; if you save
      it, you will see both versions first.{" "}
      <a href={reloadTo} className="font-medium underline underline-offset-2">
        Discard my changes and load the saved version
      </a>
    </div>
  );
}

/** After a save refused as a conflict: the version saved meanwhile, above the form with mine. */
export function SavedVersion({
  saved,
}: {
  saved: { title: string; body: Root | null; updated_at: string };
}) {
  return (
    <div className="space-y-3" data-testid="conflict-notice">
      <FormAlert>
        Not saved: this note was changed somewhere else after you opened it (
        <NoteDate iso={saved.updated_at} prefix="saved" />
        ). Its saved version is below, then your text. Copy what you need from it, then save yours
        to replace it.
      </FormAlert>
      <section
        aria-labelledby="saved-version-title"
        className="rounded-xl border border-line bg-surface p-4"
      >
        <h2
          id="saved-version-title"
          className="text-sm font-semibold uppercase tracking-wide text-muted"
        >
          The saved version
        </h2>
        <p className="mt-2 font-semibold break-words" data-testid="saved-title">
          {saved.title}
        </p>
        <div className="mt-2">
          {saved.body ? <Markdown tree={saved.body} /> : <p className="text-muted">(No text)</p>}
        </div>
      </section>
    </div>
  );
}
