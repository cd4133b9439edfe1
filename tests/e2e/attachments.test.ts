// Attachments in the browser: the owner attaches a picture with the note page's file form and sees
// it in the note (the thumbnail really loads: signed URL, CSP img-src), with JavaScript on and off;
// the person it is shared with sees it too, a stranger gets nothing, and after an unshare the
// reader's next read is refused.
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Page } from "playwright-core";
import { describe, expect } from "vitest";
import {
  arrivedAt,
  freshUser,
  NOTE_PAGE,
  signInWithPassword,
  submit,
  visit,
} from "./support/flows.ts";
import { main as stack } from "./support/stacks.ts";
import { test } from "./support/test.ts";

/** A 2×2 PNG on disk, for the file picker. */
function pictureFile(name: string): string {
  const path = join(mkdtempSync(join(tmpdir(), "attach-")), name);
  writeFileSync(
    path,
    Buffer.from(
      "iVBORw0KGgoAAAANSUhEUgAAAAIAAAACCAIAAAD91JpzAAAACXBIWXMAAAPoAAAD6AG1e1JrAAAAEklEQVQImWM4YSNywkaEAUIBACF+BGFPob/gAAAAAElFTkSuQmCC",
      "base64",
    ),
  );
  return path;
}

/** Whether the attachment's thumbnail was fetched and decoded (not blocked, not refused). */
async function thumbnailLoaded(page: Page, name: string): Promise<boolean> {
  const image = page.getByTestId("attachment").getByRole("img", { name });
  await image.waitFor();
  return image.evaluate(
    (img: HTMLImageElement) =>
      new Promise<boolean>((resolve) => {
        if (img.complete) resolve(img.naturalWidth > 0);
        else {
          img.onload = () => resolve(img.naturalWidth > 0);
          img.onerror = () => resolve(false);
        }
      }),
  );
}

describe.each([
  { javaScriptEnabled: true, label: "JavaScript on" },
  { javaScriptEnabled: false, label: "JavaScript off" },
])("attachments ($label)", ({ javaScriptEnabled }) => {
  test("attach a picture and see it; the reader too, a stranger not; unshared, refused", async ({
    browser,
  }) => {
    const owner = await freshUser(stack, "owner");
    const reader = await freshUser(stack, "reader");
    const stranger = await freshUser(stack, "stranger");
    const page = await browser.open({ javaScriptEnabled });
    await signInWithPassword(page, stack, owner);
    await visit(page, stack, "/notes/new");
    await page.fill("#field-title", "Holiday");
    await submit(page, "Create note");
    const notePath = await arrivedAt(page, stack, NOTE_PAGE);

    // A file the page refuses before sending it (JavaScript on) or the Worker refuses (off).
    await page.setInputFiles('input[name="file"]', {
      name: "page.html",
      mimeType: "text/html",
      buffer: Buffer.from("<p>hi</p>"),
    });
    await submit(page, "Attach");
    await page.getByTestId("attachment-error").waitFor();
    expect(await page.getByTestId("attachment-error").textContent()).toContain(
      "cannot be attached",
    );

    await page.setInputFiles('input[name="file"]', pictureFile("beach ☀.png"));
    await submit(page, "Attach");
    await arrivedAt(page, stack, notePath);
    expect(await thumbnailLoaded(page, "beach ☀.png")).toBe(true);
    expect(await page.getByTestId("attachment").textContent()).toContain("image/png");
    expect(await page.getByTestId("attachment-error").count()).toBe(0);

    await page.fill("#field-email", reader.email);
    await submit(page, "Share");
    await page.getByTestId("share-list").waitFor();

    const readerPage = await browser.open({ javaScriptEnabled });
    await signInWithPassword(readerPage, stack, reader);
    await visit(readerPage, stack, notePath);
    expect(await thumbnailLoaded(readerPage, "beach ☀.png")).toBe(true);
    expect(await readerPage.getByRole("button", { name: "Attach" }).count()).toBe(0);

    const strangerPage = await browser.open({ javaScriptEnabled });
    await signInWithPassword(strangerPage, stack, stranger);
    const refused = await strangerPage.goto(`${stack.appUrl}${notePath}`);
    expect(refused?.status()).toBe(404);
    expect(await strangerPage.getByTestId("attachment").count()).toBe(0);

    await visit(page, stack, notePath);
    await page.getByRole("button", { name: `Stop sharing with ${reader.email}` }).click();
    await page.getByText("Not shared with anyone.").waitFor();
    const next = await readerPage.goto(`${stack.appUrl}${notePath}`);
    expect(next?.status()).toBe(404);
    expect(await readerPage.getByTestId("attachment").count()).toBe(0);
  });
});
