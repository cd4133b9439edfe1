/** A horizontal rule with a short caption ("or continue with"). */
export function Divider({ children }: { children: string }) {
  return (
    <div className="my-5 flex items-center gap-3 text-xs text-muted">
      <span aria-hidden="true" className="h-px flex-1 bg-line" />
      {children}
      <span aria-hidden="true" className="h-px flex-1 bg-line" />
    </div>
  );
}
