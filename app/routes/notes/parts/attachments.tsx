import { type DragEvent, useState } from "react";
import { Form, useRevalidator, useRouteLoaderData } from "react-router";
import { FormAlert } from "../../../components/form-alert";
import { SubmitButton } from "../../../components/submit-button";
import type { PublicEnv } from "../../../lib/public-env";
import { useHydrated } from "../../../lib/use-hydrated";
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

/** The file being sent by the browser (JavaScript on), for the progress bar. */
interface Sending {
  name: string;
  sent: number;
  total: number;
  cancel: () => void;
}

/**
 * The owner's uploads with JavaScript on: a dropped or picked file goes straight to Storage
 * (attachment-upload.client.ts, imported only then) with a progress bar and Cancel, checked first
 * by the same rules as the server's; then the page re-reads its list. Several dropped files go one
 * after another.
 */
function useUploads(noteId: string, setProblem: (problem: AttachmentError | null) => void) {
  const root = useRouteLoaderData("root") as { env?: PublicEnv } | undefined;
  const env = root?.env;
  const revalidator = useRevalidator();
  const [sending, setSending] = useState<Sending | null>(null);
  const [status, setStatus] = useState("");

  async function send(files: File[]) {
    if (!env || sending) return;
    for (const file of files) {
      const problem = attachmentProblem(file);
      setProblem(problem);
      if (problem) return;
      setStatus(`Uploading ${file.name}…`);
      let uploadAttachment: typeof import("./attachment-upload.client").uploadAttachment;
      try {
        ({ uploadAttachment } = await import("./attachment-upload.client"));
      } catch {
        // the chunk did not load (offline, or a deploy replaced it)
        setStatus("");
        setProblem("not_sent");
        return;
      }
      const upload = uploadAttachment(env, noteId, file, (sent, total) =>
        setSending((now) => now && { ...now, sent, total }),
      );
      setSending({ name: file.name, sent: 0, total: file.size, cancel: upload.cancel });
      const outcome = await upload.done;
      setSending(null);
      if (outcome === "cancelled") {
        setStatus(`Upload of ${file.name} cancelled.`);
        return;
      }
      if (outcome) {
        setStatus("");
        setProblem(outcome);
        return;
      }
      setStatus(`${file.name} attached.`);
      await revalidator.revalidate();
    }
  }
  return { enabled: Boolean(env), send, sending, status };
}

/**
 * The note's files: images as thumbnails, every file with its size, type and a download link
 * (signed URLs that live 5 minutes, made by the server for this page). The owner attaches with a
 * plain multipart form (no JavaScript needed) and deletes each file with its own form; with
 * JavaScript, files can also be dropped on the card, and go up with a progress bar.
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
  const [dragging, setDragging] = useState(false);
  const hydrated = useHydrated();
  const uploads = useUploads(noteId, setProblem);
  const live = hydrated && uploads.enabled;
  const shown = problem ?? error;
  const action = `/notes/${noteId}/attachments`;
  if (!mine && attachments.length === 0) return null;
  // The whole card takes dropped files (a file dropped beside a small target would otherwise be
  // opened by the browser in place of the page); the form shows where they go.
  const dropTarget =
    mine && live
      ? {
          onDragEnter: (event: DragEvent) => {
            event.preventDefault();
            setDragging(true);
          },
          onDragOver: (event: DragEvent) => event.preventDefault(),
          onDragLeave: (event: DragEvent) => {
            if (!event.currentTarget.contains(event.relatedTarget as Node | null))
              setDragging(false);
          },
          onDrop: (event: DragEvent) => {
            event.preventDefault();
            setDragging(false);
            const files = [...event.dataTransfer.files];
            if (files.length > 0) void uploads.send(files);
          },
        }
      : {};
  const sending = uploads.sending;
  const percent =
    sending && sending.total > 0 ? Math.floor((sending.sent / sending.total) * 100) : 0;
  return (
    <section
      id="attachments"
      aria-labelledby="attachments-title"
      className="mt-6 rounded-2xl border border-ink-200 bg-white p-6 shadow-sm sm:p-8 dark:border-ink-800 dark:bg-ink-800/40"
      data-testid="attachments"
      {...dropTarget}
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
                    // no file (yet): an upload still going, or one cut off (the sweep clears it)
                    <span className="text-muted">{mine ? "Not uploaded" : "Not available"}</span>
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
          className={`-mx-3 mt-5 flex flex-col gap-3 rounded-xl border-2 border-dashed p-3 sm:flex-row sm:items-end ${
            dragging ? "border-accent bg-accent/5" : "border-transparent"
          }`}
          data-testid="attachment-form"
          onSubmit={(event) => {
            const input = event.currentTarget.elements.namedItem("file") as HTMLInputElement;
            const file = input.files?.[0] ?? null;
            const found = attachmentProblem(file);
            setProblem(found);
            if (found) event.preventDefault();
            else if (live && file) {
              event.preventDefault();
              void uploads.send([file]);
            }
          }}
        >
          <label className="flex-1 text-sm">
            <span className="font-medium">Attach a file</span>
            {live ? (
              <span className="text-ink-600 dark:text-ink-400"> or drop files here</span>
            ) : null}
            <input
              type="file"
              name="file"
              required
              accept={ATTACHMENT_TYPES.join(",")}
              aria-describedby="attachment-rules"
              disabled={Boolean(sending)}
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
          <SubmitButton intent="attach" className="w-auto! px-5" disabled={Boolean(sending)}>
            Attach
          </SubmitButton>
        </Form>
      ) : null}
      {sending ? (
        <div className="mt-3 flex items-center gap-3 text-sm" data-testid="upload-progress">
          <label htmlFor="upload-progress" className="min-w-0 flex-1">
            <span className="block truncate">{`Uploading ${sending.name}`}</span>
            <progress
              id="upload-progress"
              max={sending.total}
              value={sending.sent}
              aria-valuetext={`${percent}%`}
              className="mt-1 block h-2 w-full appearance-none overflow-hidden rounded-full bg-ink-200 dark:bg-ink-700 [&::-moz-progress-bar]:bg-accent [&::-webkit-progress-bar]:bg-ink-200 dark:[&::-webkit-progress-bar]:bg-ink-700 [&::-webkit-progress-value]:bg-accent"
            />
          </label>
          <span className="w-10 text-right tabular-nums" aria-hidden="true">{`${percent}%`}</span>
          <button
            type="button"
            onClick={sending.cancel}
            className="rounded-lg border border-ink-200 px-3 py-1 font-medium hover:bg-ink-100 dark:border-ink-700 dark:hover:bg-ink-800"
          >
            Cancel upload
          </button>
        </div>
      ) : null}
      <p role="status" className="sr-only" data-testid="upload-status">
        {uploads.status}
      </p>
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
