// Text typed into a textarea before React hydrates the page. React 19's hydration of a
// `<textarea defaultValue>` sets the element's value back to the server's text (react-dom's
// initTextarea), so a note's body typed while the page's scripts were still loading was silently
// dropped (its title, an <input>, was kept), and saving stored the old body with the new title.
// This module remembers what is typed until each textarea hydrates, and the textarea puts it back.
// It starts listening when it loads, in the route's chunk, which the browser runs before React
// hydrates: pages without a textarea (the first load of / and /sign-in) carry none of it.

const typed = new WeakMap<HTMLTextAreaElement, string>();
/** Textareas React has hydrated or created: typing in them is React's own business. */
const settled = new WeakSet<HTMLTextAreaElement>();

function remember(element: HTMLTextAreaElement) {
  if (!settled.has(element)) typed.set(element, element.value);
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
}

/** A textarea's ref: when React has hydrated it, the text typed before comes back. */
export function keepTypedText(element: HTMLTextAreaElement | null): void {
  if (!element || settled.has(element)) return;
  settled.add(element);
  const text = typed.get(element);
  typed.delete(element);
  if (text !== undefined && element.value !== text) element.value = text;
}

if (typeof document !== "undefined") rememberTypingUntilHydrated();
