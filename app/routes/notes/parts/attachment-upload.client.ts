import type { PublicEnv } from "../../../lib/public-env";
import type { UploadTicket } from "./attachments.server";
import { type AttachmentError, RESUMABLE_ABOVE_BYTES } from "./rules";

/**
 * A file sent to Storage by the browser (JavaScript on), loaded with `import()` only when a file
 * is dropped or picked: never in the first load, never in the Worker.
 *
 * 1. The Worker makes the attachment's row and a signed upload URL for its key (`start-upload`:
 *    the same rules as the plain form, checked on the server; the row must exist first, as the
 *    bucket's insert policy needs it and the key is its id).
 * 2. The bytes go straight to Storage with that URL's token, so the Worker never carries them:
 *    up to 6 MB in one `PUT /object/upload/sign/…` (XMLHttpRequest, for its upload progress);
 *    above, by TUS (`tus-js-client`, imported here and only then) at `/upload/resumable/sign`, in
 *    6 MB chunks that resume after a dropped connection.
 * 3. A refusal, a failure or Cancel deletes the row again (and whatever bytes arrived) through the
 *    plain form's own delete; a tab closed halfway leaves a row without a file, shown to the owner
 *    as not uploaded until they delete it.
 */
export interface UploadHandle {
  /** Settles when the file is stored: null, or what went wrong ("cancelled" after cancel()). */
  done: Promise<AttachmentError | "cancelled" | null>;
  cancel(): void;
}

export function uploadAttachment(
  env: PublicEnv,
  noteId: string,
  file: File,
  onProgress: (sent: number, total: number) => void,
): UploadHandle {
  const action = `/notes/${noteId}/attachments`;
  let cancelled = false;
  let stopTransfer: (() => void) | undefined;

  const done = (async (): Promise<AttachmentError | "cancelled" | null> => {
    const ticket = await startUpload(action, file);
    if (typeof ticket === "string") return ticket;
    if (cancelled) {
      await forget(action, ticket.id);
      return "cancelled";
    }
    const transfer =
      file.size > RESUMABLE_ABOVE_BYTES
        ? await resumable(env, ticket, file, onProgress)
        : plainPut(env, ticket, file, onProgress);
    stopTransfer = transfer.stop;
    if (cancelled) transfer.stop();
    const outcome = await transfer.done;
    if (cancelled || outcome !== null) {
      await forget(action, ticket.id);
      return cancelled ? "cancelled" : outcome;
    }
    return null;
  })().catch((): AttachmentError => "not_sent");

  return {
    done,
    cancel() {
      cancelled = true;
      stopTransfer?.();
    },
  };
}

async function startUpload(action: string, file: File): Promise<UploadTicket | AttachmentError> {
  const form = new FormData();
  form.set("intent", "start-upload");
  form.set("name", file.name);
  form.set("size", String(file.size));
  form.set("type", file.type);
  const response = await fetch(action, { method: "POST", body: form });
  const body = (await response.json().catch(() => null)) as
    | (UploadTicket & { error?: undefined })
    | { error: AttachmentError }
    | null;
  if (!response.ok || !body || body.error !== undefined) return body?.error ?? "not_stored";
  return body;
}

/** The row (and any bytes) of an upload that did not finish, deleted as the Delete button does. */
async function forget(action: string, id: string): Promise<void> {
  const form = new FormData();
  form.set("intent", "delete-attachment");
  form.set("attachment", id);
  await fetch(action, { method: "POST", body: form, redirect: "manual" }).catch(() => undefined);
}

interface Transfer {
  done: Promise<AttachmentError | null>;
  stop(): void;
}

/** Storage's refusal (upstream: 400 with the real status in the body) as the page's message. */
function refusal(status: number, body: string): AttachmentError {
  let code = String(status);
  try {
    code = String((JSON.parse(body) as { statusCode?: unknown }).statusCode ?? status);
  } catch {}
  if (code === "413") return "too_big";
  if (code === "415") return "bad_type";
  return "not_stored";
}

const storageBase = (env: PublicEnv) => `${env.SUPABASE_URL}/storage/v1`;

function plainPut(
  env: PublicEnv,
  ticket: UploadTicket,
  file: File,
  onProgress: (sent: number, total: number) => void,
): Transfer {
  const xhr = new XMLHttpRequest();
  const done = new Promise<AttachmentError | null>((resolve) => {
    xhr.upload.onprogress = (event) => onProgress(event.loaded, event.total || file.size);
    xhr.onload = () =>
      resolve(xhr.status < 300 ? null : refusal(xhr.status, String(xhr.responseText)));
    xhr.onerror = () => resolve("not_sent");
    xhr.onabort = () => resolve("not_sent");
  });
  const path = [ticket.bucket, ...ticket.path.split("/")].map(encodeURIComponent).join("/");
  xhr.open(
    "PUT",
    `${storageBase(env)}/object/upload/sign/${path}?token=${encodeURIComponent(ticket.token)}`,
  );
  xhr.setRequestHeader("apikey", env.SUPABASE_PUBLISHABLE_KEY);
  xhr.setRequestHeader("Content-Type", file.type);
  xhr.setRequestHeader("Cache-Control", "max-age=300");
  xhr.setRequestHeader("x-upsert", "false");
  xhr.send(file);
  return { done, stop: () => xhr.abort() };
}

async function resumable(
  env: PublicEnv,
  ticket: UploadTicket,
  file: File,
  onProgress: (sent: number, total: number) => void,
): Promise<Transfer> {
  const { Upload } = await import("tus-js-client");
  let resolveDone: (outcome: AttachmentError | null) => void = () => undefined;
  const done = new Promise<AttachmentError | null>((resolve) => {
    resolveDone = resolve;
  });
  const upload = new Upload(file, {
    endpoint: `${storageBase(env)}/upload/resumable/sign`,
    headers: {
      apikey: env.SUPABASE_PUBLISHABLE_KEY,
      "x-signature": ticket.token,
      "x-upsert": "false",
    },
    metadata: {
      bucketName: ticket.bucket,
      objectName: ticket.path,
      contentType: file.type,
      cacheControl: "300",
    },
    chunkSize: RESUMABLE_ABOVE_BYTES,
    uploadDataDuringCreation: true,
    // a dropped connection: tus asks the server how much arrived and goes on from there
    retryDelays: [0, 1000, 3000, 5000],
    // each upload has a key of its own (a new row), so there is nothing to resume across visits
    storeFingerprintForResuming: false,
    onProgress,
    onSuccess: () => resolveDone(null),
    onError: (error) => {
      const response = (error as { originalResponse?: { getStatus(): number; getBody(): string } })
        .originalResponse;
      resolveDone(response ? refusal(response.getStatus(), response.getBody()) : "not_sent");
    },
  });
  upload.start();
  return {
    done,
    stop: () => {
      // terminate: Storage drops the parts that arrived
      void upload.abort(true).catch(() => undefined);
      resolveDone("not_sent");
    },
  };
}
