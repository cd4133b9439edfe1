import { useState } from "react";
import { Form } from "react-router";
import { FormAlert } from "../../../components/form-alert";
import { SubmitButton } from "../../../components/submit-button";
import {
  ATTACHMENT_ERRORS,
  ATTACHMENT_RULES,
  ATTACHMENT_TYPES,
  type AttachmentError,
  attachmentProblem,
  THUMBNAIL_PX,
} from "./rules";

export interface ShownAttachment {
  id: string;
  name: string;
  size: number;
  type: string;
  image: boolean;
  thumbnailUrl: string | null;
  downloadUrl: string | null;
}

/** "12 KB", "3.4 MB": sizes as people read them. */
export function formatSize(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${Math.round(bytes / 1024)} KB`;
  return `${(bytes / (1024 * 1024)).toFixed(1)} MB`;
}

/**
 * The note's files: images as thumbnails, every file with its size, type and a download link
 * (signed URLs that live 5 minutes, made by the server for this page). The owner attaches with a
 * plain multipart form (no JavaScript needed) and deletes each file with its own form.
 */
export function Attachments({
  noteId,
  attachments,
  mine,
  error,
}: {
  noteId: string;
  attachments: ShownAttachment[];
  mine: boolean;
  error: AttachmentError | null;
}) {
  const [problem, setProblem] = useState<AttachmentError | null>(null);
  const shown = problem ?? error;
  const action = `/notes/${noteId}/attachments`;
  if (!mine && attachments.length === 0) return null;
  return (
    <section
      id="attachments"
      aria-labelledby="attachments-title"
      className="mt-6 rounded-2xl border border-ink-200 bg-white p-6 shadow-sm sm:p-8 dark:border-ink-800 dark:bg-ink-800/40"
      data-testid="attachments"
    >
      <h2 id="attachments-title" className="text-lg font-semibold tracking-tight">
        Attachments
      </h2>
      {attachments.length > 0 ? (
        <ul className="mt-4 grid gap-3 sm:grid-cols-2" data-testid="attachment-list">
          {attachments.map((file) => (
            <li
              key={file.id}
              className="flex items-center gap-3 rounded-xl border border-ink-200 p-3 dark:border-ink-800"
              data-testid="attachment"
            >
              {file.thumbnailUrl ? (
                <img
                  src={file.thumbnailUrl}
                  alt={file.name}
                  width={THUMBNAIL_PX}
                  height={THUMBNAIL_PX}
                  loading="lazy"
                  className="size-16 shrink-0 rounded-lg object-cover"
                />
              ) : (
                <span
                  aria-hidden="true"
                  className="flex size-16 shrink-0 items-center justify-center rounded-lg bg-ink-100 text-xs text-ink-600 dark:bg-ink-800 dark:text-ink-400"
                >
                  {file.type.split("/")[1]?.toUpperCase().slice(0, 4)}
                </span>
              )}
              <div className="min-w-0 flex-1 text-sm">
                <p className="truncate font-medium" title={file.name}>
                  {file.name}
                </p>
                <p className="text-xs text-ink-600 dark:text-ink-400">
                  {`${formatSize(file.size)} · ${file.type}`}
                </p>
                <div className="mt-1 flex items-center gap-3 text-xs">
                  {file.downloadUrl ? (
                    <a
                      href={file.downloadUrl}
                      className="font-medium text-accent underline-offset-2 hover:underline"
                    >
                      Download
                    </a>
                  ) : (
                    <span className="text-muted">Not available</span>
                  )}
                  {mine ? (
                    <Form method="post" action={action}>
                      <input type="hidden" name="attachment" value={file.id} />
                      <SubmitButton
                        intent="delete-attachment"
                        variant="link"
                        className="text-xs! text-red-700! dark:text-red-300!"
                        aria-label={`Delete ${file.name}`}
                      >
                        Delete
                      </SubmitButton>
                    </Form>
                  ) : null}
                </div>
              </div>
            </li>
          ))}
        </ul>
      ) : (
        <p className="mt-2 text-sm text-ink-600 dark:text-ink-400">No files attached.</p>
      )}
      {mine ? (
        <Form
          // a new form (an empty file input) once the list changed
          key={attachments.map((a) => a.id).join()}
          method="post"
          action={action}
          encType="multipart/form-data"
          className="mt-5 flex flex-col gap-3 sm:flex-row sm:items-end"
          onSubmit={(event) => {
            const input = event.currentTarget.elements.namedItem("file") as HTMLInputElement;
            const found = attachmentProblem(input.files?.[0] ?? null);
            setProblem(found);
            if (found) event.preventDefault();
          }}
        >
          <label className="flex-1 text-sm">
            <span className="font-medium">Attach a file</span>
            <input
              type="file"
              name="file"
              required
              accept={ATTACHMENT_TYPES.join(",")}
              aria-describedby="attachment-rules"
              onChange={(event) => setProblem(attachmentProblem(event.target.files?.[0] ?? null))}
              className="mt-1 block w-full text-sm file:mr-3 file:rounded-lg file:border-0 file:bg-ink-100 file:px-3 file:py-2 file:text-sm file:font-medium dark:file:bg-ink-800"
            />
            <span
              id="attachment-rules"
              className="mt-1 block text-xs text-ink-600 dark:text-ink-400"
            >
              {ATTACHMENT_RULES}
            </span>
          </label>
          <SubmitButton intent="attach" className="w-auto! px-5">
            Attach
          </SubmitButton>
        </Form>
      ) : null}
      {shown ? (
        <div className="mt-3">
          <FormAlert>
            <span data-testid="attachment-error">{ATTACHMENT_ERRORS[shown]}</span>
          </FormAlert>
        </div>
      ) : null}
    </section>
  );
}
