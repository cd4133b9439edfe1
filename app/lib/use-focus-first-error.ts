import { type RefObject, useEffect, useRef } from "react";

/**
 * After a submit comes back with errors, move focus to the first invalid field (or the form's
 * alert) so keyboard and screen-reader users land on what needs fixing. Runs when `result`
 * changes, i.e. once per answer from the action. Returns the ref to put on the form.
 */
export function useFocusFirstError(result: unknown): RefObject<HTMLFormElement | null> {
  const form = useRef<HTMLFormElement>(null);
  useEffect(() => {
    if (!result || !form.current) return;
    const target =
      form.current.querySelector<HTMLElement>('[aria-invalid="true"]') ??
      form.current.querySelector<HTMLElement>("[data-form-alert]");
    target?.focus();
  }, [result]);
  return form;
}
