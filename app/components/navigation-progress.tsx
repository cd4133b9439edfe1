/**
 * A thin bar at the top of the page while a navigation or form submission is pending, plus a
 * polite live-region message for screen readers.
 */
export function NavigationProgress({ pending }: { pending: boolean }) {
  return (
    <>
      <div
        aria-hidden="true"
        className={`fixed inset-x-0 top-0 z-50 h-0.5 overflow-hidden transition-opacity duration-300 ${
          pending ? "opacity-100 delay-150" : "opacity-0"
        }`}
      >
        <div className="h-full w-2/5 bg-accent motion-safe:animate-progress" />
      </div>
      <p className="sr-only" aria-live="polite">
        {pending ? "Loading…" : ""}
      </p>
    </>
  );
}
