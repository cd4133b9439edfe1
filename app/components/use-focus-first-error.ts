import { type RefObject, useEffect } from "react";

/**
 * After a submit comes back with errors, move focus to the first invalid field (or the form's
 * alert) so keyboard and screen-reader users land on what needs fixing. Runs when `result`
 * changes, i.e. once per answer from the action.
 */
export function useFocusFirstError(form: RefObject<HTMLFormElement | null>, result: unknown) {
  useEffect(() => {
    if (!result || !form.current) return;
    const target =
      form.current.querySelector<HTMLElement>('[aria-invalid="true"]') ??
      form.current.querySelector<HTMLElement>("[data-form-alert]");
    target?.focus();
  }, [form, result]);
}
