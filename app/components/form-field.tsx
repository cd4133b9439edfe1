import type { InputHTMLAttributes, ReactNode } from "react";

interface FormFieldProps extends Omit<InputHTMLAttributes<HTMLInputElement>, "id" | "name"> {
  label: string;
  name: string;
  /** The server's message for this field, shown under it and announced with the input. */
  error?: string;
  /** Help shown before submit (e.g. password rules). */
  hint?: ReactNode;
  /** Element beside the label (e.g. a "Forgot password?" link). */
  aside?: ReactNode;
}

/**
 * A labelled input whose hint and error are tied to it with aria-describedby; the error space is
 * only taken when there is an error, and the input keeps its size either way.
 */
export function FormField({
  label,
  name,
  error,
  hint,
  aside,
  className,
  ...input
}: FormFieldProps) {
  const ids = fieldIds(name, error, hint);
  return (
    <div className={className}>
      <div className="flex items-baseline justify-between gap-2">
        <label htmlFor={ids.id} className={LABEL_CLASS}>
          {label}
        </label>
        {aside}
      </div>
      <input
        id={ids.id}
        name={name}
        aria-invalid={error ? true : undefined}
        aria-describedby={ids.describedBy}
        className={controlClass(error)}
        {...input}
      />
      <FieldMessages ids={ids} error={error} hint={hint} />
    </div>
  );
}

export const LABEL_CLASS = "block text-sm font-medium text-ink-800 dark:text-ink-100";

/** The ids that tie a control to its hint and error (aria-describedby). */
export function fieldIds(name: string, error: string | undefined, hint: ReactNode) {
  const id = `field-${name}`;
  const hintId = hint ? `${id}-hint` : undefined;
  const errorId = error ? `${id}-error` : undefined;
  return {
    id,
    hintId,
    errorId,
    describedBy: [errorId, hintId].filter(Boolean).join(" ") || undefined,
  };
}

/**
 * An input's or textarea's look: a border in the control role (3:1 against the page), red while
 * it carries an error; keyboard focus shows the page-wide :focus-visible outline.
 */
export function controlClass(error: string | undefined, extra = "") {
  return `mt-1.5 block w-full rounded-lg border bg-field px-3 py-2 text-base text-fg shadow-xs transition-colors placeholder:text-muted sm:text-sm ${extra} ${
    error ? "border-red-600 dark:border-red-400" : "border-control"
  }`;
}

/** The error (only when there is one) and the hint under a control. */
export function FieldMessages({
  ids,
  error,
  hint,
}: {
  ids: ReturnType<typeof fieldIds>;
  error?: string;
  hint?: ReactNode;
}) {
  return (
    <>
      {error ? (
        <p id={ids.errorId} className="mt-1.5 text-sm text-red-700 dark:text-red-300">
          {error}
        </p>
      ) : null}
      {hint ? (
        <p id={ids.hintId} className="mt-1.5 text-xs text-muted">
          {hint}
        </p>
      ) : null}
    </>
  );
}
