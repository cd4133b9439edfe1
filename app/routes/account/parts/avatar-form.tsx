import { useEffect, useState } from "react";
import { Form } from "react-router";
import { Avatar } from "../../../components/avatar";
import { FormAlert } from "../../../components/form-alert";
import { SubmitButton } from "../../../components/submit-button";
import { useAvatarSource } from "../../../lib/use-avatar-source";
import {
  AVATAR_ERRORS,
  AVATAR_PIXELS,
  AVATAR_RULES,
  AVATAR_TYPES,
  type AvatarError,
  avatarProblem,
} from "./avatar-rules";

/**
 * The profile's picture: a file picker in a plain multipart form to /account/avatar (it works
 * with JavaScript off: the Worker strips the file's metadata), and Remove. With JavaScript on,
 * the chosen picture is first redrawn in the browser as a square WebP of at most AVATAR_PIXELS
 * (a canvas keeps the pixels only: no location, no camera) and shown before it is sent, so a large
 * phone photo goes up as a few dozen kilobytes. Decision 036.
 */
export function AvatarForm({
  path,
  name,
  result,
}: {
  path: string | null;
  name: string;
  /** What the last post did (the `avatar` parameter the action redirected with). */
  result: string | null;
}) {
  const source = useAvatarSource();
  const [problem, setProblem] = useState<AvatarError | null>(null);
  const [preview, setPreview] = useState<string | null>(null);
  useEffect(() => () => void (preview && URL.revokeObjectURL(preview)), [preview]);
  const shown =
    problem ?? (result && Object.hasOwn(AVATAR_ERRORS, result) ? (result as AvatarError) : null);

  async function choose(input: HTMLInputElement) {
    const file = input.files?.[0] ?? null;
    setPreview(null);
    const wrongType = file && file.size > 0 && !AVATAR_TYPES.some((t) => t === file.type);
    if (!file || wrongType) {
      setProblem(avatarProblem(file));
      return;
    }
    const square = await redrawn(file).catch(() => null);
    if (!square) {
      input.value = "";
      setProblem("not_an_image");
      return;
    }
    const files = new DataTransfer();
    files.items.add(square);
    input.files = files.files;
    setProblem(avatarProblem(square));
    setPreview(URL.createObjectURL(square));
  }

  return (
    <section
      id="avatar"
      aria-labelledby="avatar-title"
      className="mt-6 rounded-2xl border border-ink-200 bg-white p-6 shadow-sm sm:p-8 dark:border-ink-800 dark:bg-ink-800/40"
    >
      <h2 id="avatar-title" className="text-lg font-semibold">
        Picture
      </h2>
      <div className="mt-4 flex flex-wrap items-start gap-5">
        {preview ? (
          <img
            src={preview}
            alt=""
            width={80}
            height={80}
            className="size-20 rounded-full object-cover"
            data-testid="avatar-preview"
          />
        ) : (
          <Avatar source={source} path={path} name={name} size={80} />
        )}
        <div className="min-w-0 flex-1 space-y-3">
          <Form
            // a new form (an empty file input) once the picture changed
            key={path ?? "none"}
            method="post"
            action="/account/avatar"
            encType="multipart/form-data"
            className="flex flex-col gap-3 sm:flex-row sm:items-end"
            onSubmit={(event) => {
              const input = event.currentTarget.elements.namedItem("avatar") as HTMLInputElement;
              const found = avatarProblem(input.files?.[0] ?? null);
              setProblem(found);
              if (found) event.preventDefault();
            }}
          >
            <label className="min-w-0 flex-1 text-sm">
              <span className="font-medium">Choose a picture</span>
              <input
                type="file"
                name="avatar"
                required
                accept={AVATAR_TYPES.join(",")}
                aria-describedby="avatar-rules"
                onChange={(event) => void choose(event.currentTarget)}
                className="mt-1 block w-full text-sm file:mr-3 file:rounded-lg file:border-0 file:bg-ink-100 file:px-3 file:py-2 file:text-sm file:font-medium dark:file:bg-ink-800"
              />
              <span id="avatar-rules" className="mt-1 block text-xs text-ink-600 dark:text-ink-400">
                {AVATAR_RULES} Anyone with its address can see it; where and with what it was taken
                is removed before it is stored.
              </span>
            </label>
            <SubmitButton intent="upload" className="w-auto! px-5">
              Upload
            </SubmitButton>
          </Form>
          {path ? (
            <Form method="post" action="/account/avatar">
              <SubmitButton intent="remove" variant="secondary" className="w-auto! px-4 py-1.5!">
                Remove picture
              </SubmitButton>
            </Form>
          ) : null}
        </div>
      </div>
      {shown ? (
        <div className="mt-4">
          <FormAlert>
            <span data-testid="avatar-error">{AVATAR_ERRORS[shown]}</span>
          </FormAlert>
        </div>
      ) : result === "saved" || result === "removed" ? (
        <div className="mt-4">
          <FormAlert tone="success">
            {result === "saved" ? "Your picture was saved." : "Your picture was removed."}
          </FormAlert>
        </div>
      ) : null}
    </section>
  );
}

/**
 * The picture's centre square, at most AVATAR_PIXELS wide, drawn on a canvas and encoded again
 * (WebP, or JPEG where the browser cannot write WebP): only pixels survive. The browser applies
 * the photo's EXIF orientation when it decodes it.
 */
async function redrawn(file: File): Promise<File> {
  const bitmap = await createImageBitmap(file);
  const side = Math.min(bitmap.width, bitmap.height);
  const size = Math.min(AVATAR_PIXELS, side);
  const canvas = document.createElement("canvas");
  canvas.width = size;
  canvas.height = size;
  const context = canvas.getContext("2d");
  if (!context || side === 0) throw new Error("no canvas");
  context.drawImage(
    bitmap,
    (bitmap.width - side) / 2,
    (bitmap.height - side) / 2,
    side,
    side,
    0,
    0,
    size,
    size,
  );
  bitmap.close();
  const encode = (type: string) =>
    new Promise<Blob | null>((resolve) => canvas.toBlob(resolve, type, 0.85));
  let blob = await encode("image/webp");
  if (blob?.type !== "image/webp") blob = await encode("image/jpeg");
  if (!blob) throw new Error("not encoded");
  const ext = blob.type === "image/webp" ? "webp" : "jpg";
  return new File([blob], `avatar.${ext}`, { type: blob.type });
}
