import type { Root } from "hast";
import { Form, Link } from "react-router";
import { FormAlert } from "../../../components/form-alert";
import { FormField } from "../../../components/form-field";
import { SubmitButton } from "../../../components/submit-button";
import type { FormErrors } from "../../../lib/forms.server";
import { useFocusFirstError } from "../../../lib/use-focus-first-error";
import { FormTextarea } from "./form-textarea";
import { Markdown } from "./markdown";
import { BODY_MAX, TAG_RULES, TITLE_MAX } from "./rules";

/** Formatted once: Intl's number formatting at every render was a fiftieth of the page's CPU. */
const BODY_HINT = `Markdown (**bold**, lists, [links](https://example.com)), up to ${BODY_MAX.toLocaleString("en")} characters.`;

/**
 * Title, body and tags: the form behind /notes/new and /notes/:id/edit. "Preview" posts the draft
 * (intent=preview); the action renders its Markdown on the server and hands the draft back, so it
 * works without JavaScript and nothing is saved. Save comes first: Enter in a field saves.
 */
export function NoteForm({
  values,
  errors,
  submitLabel,
  cancelTo,
  result,
  preview,
}: {
  values: { title?: string; body?: string; tags?: string; version?: string };
  errors?: FormErrors;
  submitLabel: string;
  cancelTo: string;
  /** The action's answer, to move focus to the first error. */
  result: unknown;
  /** The draft's body as the server rendered it, after "Preview". */
  preview?: Root | null;
}) {
  const formRef = useFocusFirstError(result);
  return (
    <Form method="post" noValidate ref={formRef} className="space-y-5" data-testid="note-form">
      {errors?.form ? <FormAlert code={errors.code}>{errors.form}</FormAlert> : null}
      {values.version === undefined ? null : (
        <input type="hidden" name="version" value={values.version} />
      )}
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
        hint={BODY_HINT}
      />
      {preview !== undefined ? (
        <section
          aria-labelledby="preview-title"
          className="rounded-xl border border-line bg-surface p-4"
          data-testid="note-preview"
        >
          <h2
            id="preview-title"
            className="text-sm font-semibold uppercase tracking-wide text-muted"
          >
            Preview (not saved yet)
          </h2>
          <div className="mt-3">
            {preview ? <Markdown tree={preview} /> : <p className="text-muted">(No text)</p>}
          </div>
        </section>
      ) : null}
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
        <SubmitButton intent="save" className="w-auto! px-6">
          {submitLabel}
        </SubmitButton>
        <SubmitButton intent="preview" variant="secondary" className="w-auto! px-5">
          Preview
        </SubmitButton>
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
