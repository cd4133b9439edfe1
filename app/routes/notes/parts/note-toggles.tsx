import { type FormEvent, useCallback, useMemo, useState } from "react";
import { useFetcher, useFetchers, useSubmit } from "react-router";

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

/** Every toggle of note `id` goes through the fetcher of this key, wherever it was pressed. */
const fetcherKey = (id: string) => `toggle-${id}`;
const KEY_PREFIX = fetcherKey("");

export interface NoteTogglesOnPage {
  /** The one submit handler for every note's toggles below it (forms bubble their submits). */
  onSubmit: (event: FormEvent<HTMLElement>) => void;
  /** The intent in flight for a note, if any: what optimisticState() applies. */
  pending: (id: string) => FormDataEntryValue | null | undefined;
  /** The notes whose toggles were used on this page: only they can have an outcome to show. */
  submitted: ReadonlySet<string>;
}

/**
 * The pin and archive toggles of every note on a page, as one mechanism: each note's buttons are
 * a plain form (it posts to /notes/:id and comes back to `returnTo` without JavaScript); once
 * JavaScript runs, one delegated handler sends a form's submit through that note's fetcher
 * (`toggle-<id>`, so toggles of different notes run side by side) and the change shows at once.
 * A page of 20 cards renders no fetcher, form component or hook per card: on the server those
 * were most of the list's render.
 */
export function useNoteToggles(): NoteTogglesOnPage {
  const submit = useSubmit();
  const fetchers = useFetchers();
  const [submitted, setSubmitted] = useState<ReadonlySet<string>>(() => new Set());
  const intents = useMemo(() => {
    const byNote = new Map<string, FormDataEntryValue | null | undefined>();
    for (const fetcher of fetchers) {
      if (fetcher.key.startsWith(KEY_PREFIX)) {
        byNote.set(fetcher.key.slice(KEY_PREFIX.length), fetcher.formData?.get("intent"));
      }
    }
    return byNote;
  }, [fetchers]);
  const onSubmit = useCallback(
    (event: FormEvent<HTMLElement>) => {
      const form = event.target;
      if (!(form instanceof HTMLFormElement) || !form.dataset.noteToggles) return;
      event.preventDefault();
      const id = form.dataset.noteToggles;
      const submitter = (event.nativeEvent as SubmitEvent).submitter;
      const formData = new FormData(form, submitter);
      // Tells the action to answer with data rather than redirect back (toggle.server.ts).
      formData.set("fetcher", "1");
      setSubmitted((ids) => (ids.has(id) ? ids : new Set(ids).add(id)));
      void submit(formData, {
        method: "post",
        action: form.getAttribute("action") ?? undefined,
        navigate: false,
        fetcherKey: fetcherKey(id),
      });
    },
    [submit],
  );
  const pending = useCallback((id: string) => intents.get(id), [intents]);
  return { onSubmit, pending, submitted };
}

/**
 * Keeps the outcome of a note's toggles while the note is out of view (archived from the list, it
 * hides until the server answers): renders nothing. A page renders one per submitted note.
 */
export function KeepToggleOutcome({ id }: { id: string }) {
  useFetcher<ToggleResult>({ key: fetcherKey(id) });
  return null;
}

/** The server's refusal of a note's last toggle ("This note no longer exists."), once settled. */
export function ToggleFailure({ id }: { id: string }) {
  const fetcher = useFetcher<ToggleResult>({ key: fetcherKey(id) });
  const failed = fetcher.state === "idle" && fetcher.data?.ok === false ? fetcher.data : null;
  return failed ? (
    <p role="alert" className="text-xs text-red-700 dark:text-red-300">
      {failed.message}
    </p>
  ) : null;
}

const buttonClass =
  "inline-flex items-center gap-1.5 rounded-lg border border-ink-200 bg-white px-2.5 py-1.5 text-xs font-medium text-ink-800 hover:bg-ink-50 dark:border-ink-600 dark:bg-ink-800 dark:text-ink-100 dark:hover:bg-ink-800/70";
const pressedClass =
  "aria-pressed:border-amber-300 aria-pressed:bg-amber-50 aria-pressed:text-amber-900 dark:aria-pressed:border-amber-700 dark:aria-pressed:bg-amber-950 dark:aria-pressed:text-amber-100";

/**
 * Pin and archive buttons for one note, in the state `shown` (optimisticState() of the note and
 * its pending intent), inside an element whose onSubmit is useNoteToggles()'s. Pin is a toggle
 * button: its name stays "Pin “title”" and aria-pressed (and the pressed look) tells whether the
 * note is pinned; the name always starts with the words the button shows. `watched`: the note's
 * toggles were used on this page, so a refusal from the server shows beside them.
 */
export function NoteToggles({
  id,
  title,
  shown,
  returnTo,
  watched,
}: {
  id: string;
  title: string;
  shown: ToggleState;
  returnTo: string;
  watched: boolean;
}) {
  // One form for both buttons: each submits its own intent (the pressed button's name and value
  // travel with the form, with or without JavaScript); the hidden field is the same for both.
  return (
    <div className="flex flex-wrap items-center gap-2">
      <form method="post" action={`/notes/${id}`} className="contents" data-note-toggles={id}>
        <input type="hidden" name="returnTo" value={returnTo} />
        <button
          type="submit"
          name="intent"
          value={shown.pinned ? "unpin" : "pin"}
          aria-pressed={shown.pinned}
          aria-label={`Pin “${title}”`}
          data-testid="toggle-pin"
          className={`icon-pin ${buttonClass} ${pressedClass}`}
        >
          Pin
        </button>
        <button
          type="submit"
          name="intent"
          value={shown.archived ? "unarchive" : "archive"}
          aria-label={`${shown.archived ? "Unarchive" : "Archive"} “${title}”`}
          data-testid="toggle-archive"
          className={`icon-archive ${buttonClass}`}
        >
          {shown.archived ? "Unarchive" : "Archive"}
        </button>
      </form>
      {watched ? <ToggleFailure id={id} /> : null}
    </div>
  );
}
