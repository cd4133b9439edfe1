// Text typed into a textarea before React hydrates the page. React 19's hydration of a
// `<textarea defaultValue>` sets the element's value back to the server's text (react-dom's
// initTextarea), so a note's body typed while the page's scripts were still loading was silently
// dropped (its title, an <input>, was kept), and saving stored the old body with the new title.
// Setting the value also puts the caret at the end. This module remembers what is typed, and
// where the caret is, until each textarea hydrates, and the textarea puts both back.
// It starts listening when it loads, in the route's chunk, which the browser runs before React
// hydrates: pages without a textarea (the first load of / and /sign-in) carry none of it.

interface Typed {
  text: string;
  start: number;
  end: number;
  direction: "forward" | "backward" | "none";
}

const typed = new WeakMap<HTMLTextAreaElement, Typed>();
/** Textareas React has hydrated or created: typing in them is React's own business. */
const settled = new WeakSet<HTMLTextAreaElement>();

function remember(element: HTMLTextAreaElement) {
  if (settled.has(element)) return;
  typed.set(element, {
    text: element.value,
    start: element.selectionStart,
    end: element.selectionEnd,
    direction: element.selectionDirection ?? "none",
  });
}

/** Keeps what was typed so far, and what is typed until each textarea hydrates. */
function rememberTypingUntilHydrated(): void {
  for (const element of document.querySelectorAll("textarea")) {
    if (element.value !== element.defaultValue) remember(element);
  }
  document.addEventListener(
    "input",
    (event) => {
      if (event.target instanceof HTMLTextAreaElement) remember(event.target);
    },
    true,
  );
  const onCaret = (event: Event) => {
    const element = event.target;
    if (!(element instanceof HTMLTextAreaElement)) return;
    // Only the caret, and only over the text typed: hydration's reset to the server's text moves
    // the caret too (a selectionchange that can come before the textarea's ref), and must not be
    // taken for what was typed. A caret moved in the server's text needs nothing kept.
    if (typed.get(element)?.text === element.value) remember(element);
  };
  // "selectionchange" at the textarea itself (Chromium, Firefox); keys and clicks where it is not
  for (const type of ["selectionchange", "keyup", "pointerup"]) {
    document.addEventListener(type, onCaret, true);
  }
}

/** A textarea's ref: when React has hydrated it, the text typed before (and the caret) comes back. */
export function keepTypedText(element: HTMLTextAreaElement | null): void {
  if (!element || settled.has(element)) return;
  settled.add(element);
  const kept = typed.get(element);
  typed.delete(element);
  if (kept === undefined || element.value === kept.text) return;
  element.value = kept.text;
  if (element === document.activeElement) {
    element.setSelectionRange(kept.start, kept.end, kept.direction);
  }
}

if (typeof document !== "undefined") rememberTypingUntilHydrated();
