import type { ReactNode } from "react";

/**
 * A message about the whole form (role=alert, so it is announced when it appears). Focusable so
 * the page can move focus to it after a failed submit. `code` is the auth server's error code.
 */
export function FormAlert({
  children,
  code,
  tone = "error",
}: {
  children: ReactNode;
  code?: string;
  tone?: "error" | "success";
}) {
  const colours =
    tone === "error"
      ? "border-red-200 bg-red-50 text-red-900 dark:border-red-800 dark:bg-red-950 dark:text-red-100"
      : "border-emerald-200 bg-emerald-50 text-emerald-900 dark:border-emerald-800 dark:bg-emerald-950 dark:text-emerald-100";
  return (
    <div
      role={tone === "error" ? "alert" : "status"}
      tabIndex={-1}
      data-form-alert=""
      className={`rounded-lg border px-3 py-2.5 text-sm outline-none ${colours}`}
    >
      <div>{children}</div>
      {code ? (
        <p className="mt-1 font-mono text-xs opacity-70">
          Error code: <span data-testid="error-code">{code}</span>
        </p>
      ) : null}
    </div>
  );
}
