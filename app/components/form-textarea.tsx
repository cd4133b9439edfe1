import type { ReactNode, TextareaHTMLAttributes } from "react";

interface FormTextareaProps
  extends Omit<TextareaHTMLAttributes<HTMLTextAreaElement>, "id" | "name"> {
  label: string;
  name: string;
  error?: string;
  hint?: ReactNode;
}

/** FormField's multi-line sibling: label, hint and error tied to the textarea. */
export function FormTextarea({
  label,
  name,
  error,
  hint,
  className,
  ...textarea
}: FormTextareaProps) {
  const id = `field-${name}`;
  const hintId = hint ? `${id}-hint` : undefined;
  const errorId = error ? `${id}-error` : undefined;
  const describedBy = [errorId, hintId].filter(Boolean).join(" ") || undefined;
  return (
    <div className={className}>
      <label htmlFor={id} className="block text-sm font-medium text-ink-800 dark:text-ink-100">
        {label}
      </label>
      <textarea
        id={id}
        name={name}
        aria-invalid={error ? true : undefined}
        aria-describedby={describedBy}
        className={`mt-1.5 block min-h-64 w-full rounded-lg border bg-white px-3 py-2 text-base leading-relaxed text-ink-900 shadow-xs outline-none transition-colors placeholder:text-ink-400 focus:ring-2 sm:text-sm dark:bg-ink-900 dark:text-ink-50 ${
          error
            ? "border-red-500 focus:border-red-500 focus:ring-red-500/30 dark:border-red-400"
            : "border-ink-200 focus:border-brand-500 focus:ring-brand-500/30 dark:border-ink-600"
        }`}
        {...textarea}
      />
      {error ? (
        <p id={errorId} className="mt-1.5 text-sm text-red-700 dark:text-red-300">
          {error}
        </p>
      ) : null}
      {hint ? (
        <p id={hintId} className="mt-1.5 text-xs text-ink-600 dark:text-ink-400">
          {hint}
        </p>
      ) : null}
    </div>
  );
}
