import { useFetcher } from "react-router";
import { useHydrated } from "../../../lib/use-hydrated";

export interface ToggleState {
  pinned: boolean;
  archived: boolean;
}

type ToggleResult = { ok: true } | { ok: false; message: string };

/**
 * The pending intent of a toggle fetcher, applied to the note's state: what the page shows while
 * the request is in flight. Once it settles the loaders revalidate and the server's state shows.
 */
export function optimisticState(state: ToggleState, intent: FormDataEntryValue | null | undefined) {
  switch (intent) {
    case "pin":
      return { ...state, pinned: true };
    case "unpin":
      return { ...state, pinned: false };
    case "archive":
      return { ...state, archived: true };
    case "unarchive":
      return { ...state, archived: false };
    default:
      return state;
  }
}

export function useToggleFetcher(id: string) {
  return useFetcher<ToggleResult>({ key: `toggle-${id}` });
}

const buttonClass =
  "inline-flex items-center gap-1.5 rounded-lg border border-ink-200 bg-white px-2.5 py-1.5 text-xs font-medium text-ink-800 hover:bg-ink-50 dark:border-ink-600 dark:bg-ink-800 dark:text-ink-100 dark:hover:bg-ink-800/70";
const pressedClass =
  "aria-pressed:border-amber-300 aria-pressed:bg-amber-50 aria-pressed:text-amber-900 dark:aria-pressed:border-amber-700 dark:aria-pressed:bg-amber-950 dark:aria-pressed:text-amber-100";

/**
 * Pin and archive buttons for one note: real forms (they post to /notes/:id and come back to
 * `returnTo` without JavaScript); with JavaScript a fetcher submits them and the change shows at
 * once. Pin is a toggle button: its name stays "Pin “title”" and aria-pressed (and the pressed
 * look) tells whether the note is pinned; the name always starts with the words the button shows.
 */
export function NoteToggles({
  id,
  title,
  state,
  returnTo,
}: {
  id: string;
  title: string;
  state: ToggleState;
  returnTo: string;
}) {
  const fetcher = useToggleFetcher(id);
  const hydrated = useHydrated();
  const shown = optimisticState(state, fetcher.formData?.get("intent"));
  const failed = fetcher.state === "idle" && fetcher.data?.ok === false ? fetcher.data : null;
  // One form for both buttons: each submits its own intent (the pressed button's name and value
  // travel with the form, with or without JavaScript); the hidden fields are the same for both.
  return (
    <div className="flex flex-wrap items-center gap-2">
      <fetcher.Form method="post" action={`/notes/${id}`} className="contents">
        <input type="hidden" name="returnTo" value={returnTo} />
        {hydrated ? <input type="hidden" name="fetcher" value="1" /> : null}
        <button
          type="submit"
          name="intent"
          value={shown.pinned ? "unpin" : "pin"}
          aria-pressed={shown.pinned}
          aria-label={`Pin “${title}”`}
          data-testid="toggle-pin"
          className={`${buttonClass} ${pressedClass}`}
        >
          <PinIcon />
          Pin
        </button>
        <button
          type="submit"
          name="intent"
          value={shown.archived ? "unarchive" : "archive"}
          aria-label={`${shown.archived ? "Unarchive" : "Archive"} “${title}”`}
          data-testid="toggle-archive"
          className={buttonClass}
        >
          <ArchiveIcon />
          {shown.archived ? "Unarchive" : "Archive"}
        </button>
      </fetcher.Form>
      {failed ? (
        <p role="alert" className="text-xs text-red-700 dark:text-red-300">
          {failed.message}
        </p>
      ) : null}
    </div>
  );
}

function PinIcon() {
  return (
    <svg aria-hidden="true" viewBox="0 0 16 16" className="size-3.5" fill="currentColor">
      <path d="M9.8 1.5a1 1 0 0 1 1.4 0l3.3 3.3a1 1 0 0 1 0 1.4l-1.2 1.2a1 1 0 0 1-.9.3l-1.5 1.5.3 2.3a1 1 0 0 1-.3.8l-.7.7a1 1 0 0 1-1.4 0L6.5 10.7 2.9 14.3a.7.7 0 0 1-1-1l3.6-3.6-2.3-2.3a1 1 0 0 1 0-1.4l.7-.7a1 1 0 0 1 .8-.3l2.3.3 1.5-1.5a1 1 0 0 1 .3-.9l1.2-1.2Z" />
    </svg>
  );
}

function ArchiveIcon() {
  return (
    <svg aria-hidden="true" viewBox="0 0 16 16" className="size-3.5" fill="currentColor">
      <path d="M1.5 3A1.5 1.5 0 0 1 3 1.5h10A1.5 1.5 0 0 1 14.5 3v1A1.5 1.5 0 0 1 13.5 5.4V12a2.5 2.5 0 0 1-2.5 2.5H5A2.5 2.5 0 0 1 2.5 12V5.4A1.5 1.5 0 0 1 1.5 4V3Zm2.5 2.5V12a1 1 0 0 0 1 1h6a1 1 0 0 0 1-1V5.5H4ZM6 7.5h4a.75.75 0 0 1 0 1.5H6a.75.75 0 0 1 0-1.5Z" />
    </svg>
  );
}
