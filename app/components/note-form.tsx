import { Form, Link } from "react-router";
import type { FormErrors } from "../lib/forms.server";
import { BODY_MAX, TAG_RULES, TITLE_MAX } from "../routes/notes/rules";
import { FormAlert } from "./form-alert";
import { FormField } from "./form-field";
import { FormTextarea } from "./form-textarea";
import { SubmitButton } from "./submit-button";
import { useFocusFirstError } from "./use-focus-first-error";

/** Title, body and tags: the form behind /notes/new and /notes/:id/edit. */
export function NoteForm({
  values,
  errors,
  submitLabel,
  cancelTo,
  result,
}: {
  values: { title?: string; body?: string; tags?: string };
  errors?: FormErrors;
  submitLabel: string;
  cancelTo: string;
  /** The action's answer, to move focus to the first error. */
  result: unknown;
}) {
  const formRef = useFocusFirstError(result);
  return (
    <Form method="post" noValidate ref={formRef} className="space-y-5" data-testid="note-form">
      {errors?.form ? <FormAlert code={errors.code}>{errors.form}</FormAlert> : null}
      <FormField
        label="Title"
        name="title"
        type="text"
        required
        maxLength={TITLE_MAX}
        autoComplete="off"
        defaultValue={values.title}
        error={errors?.fields.title}
      />
      <FormTextarea
        label="Note"
        name="body"
        rows={14}
        defaultValue={values.body}
        error={errors?.fields.body}
        hint={`Plain text, up to ${BODY_MAX.toLocaleString("en")} characters.`}
      />
      <FormField
        label="Tags"
        name="tags"
        type="text"
        autoComplete="off"
        placeholder="work, ideas"
        defaultValue={values.tags}
        error={errors?.fields.tags}
        hint={TAG_RULES}
      />
      <div className="flex flex-wrap items-center gap-3">
        <SubmitButton className="w-auto! px-6">{submitLabel}</SubmitButton>
        <Link
          to={cancelTo}
          className="rounded-lg px-4 py-2.5 text-sm font-medium text-muted hover:bg-subtle"
        >
          Cancel
        </Link>
      </div>
    </Form>
  );
}

/** The narrow page frame the note pages use. */
export function NotePage({ children }: { children: React.ReactNode }) {
  return <div className="mx-auto w-full max-w-3xl py-8 sm:py-10">{children}</div>;
}

export function BackLink({ to, children }: { to: string; children: React.ReactNode }) {
  return (
    <Link to={to} className="text-sm font-medium text-accent underline-offset-2 hover:underline">
      ← {children}
    </Link>
  );
}
