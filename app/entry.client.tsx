import { StrictMode, startTransition } from "react";
import { hydrateRoot } from "react-dom/client";
import { HydratedRouter } from "react-router/dom";

// React Router cancels a page's data request whenever a newer navigation or submission takes its
// place (a live re-read of a note, cut off as its owner presses a button). React Router 8.4 leaves
// two promises of such a request unhandled when the cut lands while the answer's body is still being
// read, and the browser reports the cancellation as an uncaught error: "signal is aborted without
// reason". React Router 8.5.3 handles it (remix-run/react-router#15765); until the toolchain's
// @react-router/dev can move with it, a cancellation (an AbortError, and nothing else) is not an
// error of the page (tests/e2e/live-notes.test.ts, "a cancelled re-read").
window.addEventListener("unhandledrejection", (event) => {
  if (event.reason instanceof DOMException && event.reason.name === "AbortError") {
    event.preventDefault();
  }
});

startTransition(() => {
  hydrateRoot(
    document,
    <StrictMode>
      <HydratedRouter />
    </StrictMode>,
  );
});
