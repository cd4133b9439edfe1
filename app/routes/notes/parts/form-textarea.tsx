import type { ReactNode, TextareaHTMLAttributes } from "react";
import { controlClass, FieldMessages, fieldIds, LABEL_CLASS } from "../../../components/form-field";
import { keepTypedText } from "../../../lib/typed-before-hydration";

interface FormTextareaProps
  extends Omit<TextareaHTMLAttributes<HTMLTextAreaElement>, "id" | "name"> {
  label: string;
  name: string;
  error?: string;
  hint?: ReactNode;
}

/** FormField's multi-line sibling: label, hint and error tied to the textarea, which keeps what
 * was typed before the page hydrated (typed-before-hydration.ts). */
export function FormTextarea({
  label,
  name,
  error,
  hint,
  className,
  ...textarea
}: FormTextareaProps) {
  const ids = fieldIds(name, error, hint);
  return (
    <div className={className}>
      <label htmlFor={ids.id} className={LABEL_CLASS}>
        {label}
      </label>
      <textarea
        ref={keepTypedText}
        id={ids.id}
        name={name}
        aria-invalid={error ? true : undefined}
        aria-describedby={ids.describedBy}
        className={controlClass(error, "min-h-64 leading-relaxed")}
        {...textarea}
      />
      <FieldMessages ids={ids} error={error} hint={hint} />
    </div>
  );
}
