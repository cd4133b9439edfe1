/** A horizontal rule with a short caption ("or continue with"). */
export function Divider({ children }: { children: string }) {
  return (
    <div className="my-5 flex items-center gap-3 text-xs text-ink-400">
      <span aria-hidden="true" className="h-px flex-1 bg-ink-200 dark:bg-ink-800" />
      {children}
      <span aria-hidden="true" className="h-px flex-1 bg-ink-200 dark:bg-ink-800" />
    </div>
  );
}
