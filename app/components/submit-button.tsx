import type { ButtonHTMLAttributes, ReactNode } from "react";
import { useNavigation } from "react-router";

interface SubmitButtonProps extends ButtonHTMLAttributes<HTMLButtonElement> {
  children: ReactNode;
  /** The `intent` this button submits; it shows the pending state only for its own submission. */
  intent?: string;
  variant?: "primary" | "secondary" | "link";
}

const STYLES = {
  primary: "w-full bg-brand-600 text-white hover:bg-brand-700 disabled:bg-brand-600/70 px-4 py-2.5",
  secondary:
    "w-full border border-ink-200 bg-white text-ink-800 hover:bg-ink-50 dark:border-ink-600 dark:bg-ink-800 dark:text-ink-50 dark:hover:bg-ink-800/70 disabled:opacity-60 px-4 py-2.5",
  link: "text-accent underline-offset-2 hover:underline disabled:opacity-50 disabled:no-underline px-0 py-0",
} as const;

/**
 * A submit button that, with JavaScript on, shows a spinner while its own form submission is in
 * flight and refuses a second click (no double submits). The label never changes, so the button
 * keeps its size and tests can find it by name.
 */
export function SubmitButton({
  children,
  intent,
  variant = "primary",
  className = "",
  disabled,
  ...button
}: SubmitButtonProps) {
  const navigation = useNavigation();
  const submitting = navigation.state === "submitting";
  const mine =
    submitting && (intent === undefined || navigation.formData?.get("intent") === intent);
  return (
    <button
      type="submit"
      name={intent ? "intent" : undefined}
      value={intent}
      disabled={disabled || submitting}
      aria-busy={mine || undefined}
      className={`relative inline-flex items-center justify-center gap-2 rounded-lg text-sm font-medium transition-colors disabled:cursor-not-allowed ${STYLES[variant]} ${className}`}
      {...button}
    >
      {variant !== "link" ? (
        <span
          aria-hidden="true"
          className={`absolute left-3 size-4 rounded-full border-2 border-current border-r-transparent motion-safe:animate-spin ${
            mine ? "opacity-100" : "opacity-0"
          }`}
        />
      ) : null}
      {children}
    </button>
  );
}
