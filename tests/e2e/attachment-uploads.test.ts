// Uploads with JavaScript on: a picture dropped on the note's file form goes straight to Storage
// with a progress bar, and appears in the note as a thumbnail made by Storage's image
// transformations (a signed render URL); a file over 6 MB goes up by TUS at
// /storage/v1/upload/resumable and is listed; a file of the wrong type is refused before anything
// is sent. The first load of the note page fetches no upload code. (JavaScript off, the plain
// form: tests/e2e/attachments.test.ts.)
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
import { RESULTS_DIR } from "./support/results.ts";
import { main as stack } from "./support/stacks.ts";
import { test } from "./support/test.ts";

/** A 2×2 PNG. */
const PNG =
  "iVBORw0KGgoAAAANSUhEUgAAAAIAAAACCAIAAAD91JpzAAAACXBIWXMAAAPoAAAD6AG1e1JrAAAAEklEQVQImWM4YSNywkaEAUIBACF+BGFPob/gAAAAAElFTkSuQmCC";

/**
 * A new note of the page's user, open and hydrated; its path. The router is idle before React has
 * run the card's effects, so this waits for the drop hint, which the card shows only once files can
 * be dropped (a drop dispatched before that would be lost).
 */
async function newNote(page: Page, title: string): Promise<string> {
  await visit(page, stack, "/notes/new");
  await page.fill("#field-title", title);
  await submit(page, "Create note");
  const notePath = await arrivedAt(page, stack, NOTE_PAGE);
  await visit(page, stack, notePath);
  await page.getByText("or drop files here").waitFor();
  return notePath;
}

/**
 * Drops a file on the attachment form (or `target`) as a browser does (dragenter, dragover, drop
 * with a DataTransfer), made in the page from base64 bytes or `size` bytes of text.
 */
async function drop(
  page: Page,
  file: { name: string; type: string; base64?: string; size?: number },
  target = '[data-testid="attachment-form"]',
): Promise<void> {
  const dataTransfer = await page.evaluateHandle((f) => {
    const bytes = f.base64
      ? Uint8Array.from(atob(f.base64), (c) => c.charCodeAt(0))
      : new Uint8Array(f.size ?? 0).fill(97);
    const transfer = new DataTransfer();
    transfer.items.add(new File([bytes], f.name, { type: f.type }));
    return transfer;
  }, file);
  for (const type of ["dragenter", "dragover", "drop"]) {
    await page.dispatchEvent(target, type, { dataTransfer });
  }
}

/** Records, from now on, the highest value the upload progress bar showed (-1: never shown). */
async function watchProgress(page: Page): Promise<() => Promise<number>> {
  await page.evaluate(() => {
    const w = window as unknown as { __progress: number };
    w.__progress = -1;
    const read = () => {
      const bar = document.querySelector<HTMLProgressElement>("#upload-progress");
      if (bar) w.__progress = Math.max(w.__progress, bar.value / bar.max);
    };
    new MutationObserver(read).observe(document.body, {
      subtree: true,
      childList: true,
      attributes: true,
    });
  });
  return () => page.evaluate(() => (window as unknown as { __progress: number }).__progress);
}

/** Whether the image was fetched and decoded (not blocked, not refused). */
function loaded(page: Page, name: string): Promise<boolean> {
  return page
    .getByTestId("attachment")
    .getByRole("img", { name })
    .evaluate(
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

describe("uploads with JavaScript", () => {
  test("a dropped picture: progress, then its thumbnail from a transformation; the first load has no upload code", async ({
    browser,
  }) => {
    const owner = await freshUser(stack, "dropper");
    const page = await browser.open();
    const scripts: string[] = [];
    page.on("request", (request) => {
      if (request.resourceType() === "script") scripts.push(request.url());
    });
    await signInWithPassword(page, stack, owner);
    const notePath = await newNote(page, "Dropped");
    expect(scripts.filter((url) => /attachment-upload|tus|browser-/.test(url))).toEqual([]);
    expect(await page.getByText("or drop files here").count()).toBe(1);

    // the wrong type: refused in the page, nothing sent
    const sent: string[] = [];
    page.on("request", (request) => sent.push(request.url()));
    await drop(page, { name: "page.html", type: "text/html", base64: btoa("<p>hi</p>") });
    await page.getByTestId("attachment-error").waitFor();
    expect(await page.getByTestId("attachment-error").textContent()).toContain(
      "cannot be attached",
    );
    expect(sent.filter((url) => url.includes("/attachments") || url.includes("/storage/"))).toEqual(
      [],
    );

    const progress = await watchProgress(page);
    // dropped on the card's heading, beside the form: the whole card takes files
    await drop(
      page,
      { name: "sunset ☀.png", type: "image/png", base64: PNG },
      "#attachments-title",
    );
    await page.getByTestId("upload-status").filter({ hasText: "sunset ☀.png attached." }).waitFor();
    const image = page.getByTestId("attachment").getByRole("img", { name: "sunset ☀.png" });
    await image.waitFor();
    expect(await progress()).toBeGreaterThanOrEqual(0);
    expect(await page.getByTestId("attachment-error").count()).toBe(0);
    const src = (await image.getAttribute("src")) ?? "";
    expect(src.startsWith(`${stack.backendUrl}/storage/v1/render/image/sign/attachments/`)).toBe(
      true,
    );
    expect(await loaded(page, "sunset ☀.png")).toBe(true);
    // the bytes went to Storage, not through the Worker: an upload URL signed for the key
    expect(sent.some((url) => url.includes("/storage/v1/object/upload/sign/attachments/"))).toBe(
      true,
    );
    expect(new URL(page.url()).pathname).toBe(notePath);
    await page.screenshot({ path: `${RESULTS_DIR}/attachment-dropped.png` });
  });

  test("a file over 6 MB goes up by TUS, with a progress bar, and is listed", async ({
    browser,
  }) => {
    const owner = await freshUser(stack, "big");
    const page = await browser.open();
    await signInWithPassword(page, stack, owner);
    await newNote(page, "Big file");
    const resumable: string[] = [];
    page.on("request", (request) => {
      if (request.url().includes("/storage/v1/upload/resumable"))
        resumable.push(`${request.method()} ${new URL(request.url()).pathname}`);
    });
    const progress = await watchProgress(page);
    await drop(page, { name: "notes.txt", type: "text/plain", size: 7 * 1024 * 1024 });
    await page.getByTestId("upload-progress").waitFor();
    expect(await page.getByRole("progressbar").count()).toBe(1);
    await page.screenshot({ path: `${RESULTS_DIR}/attachment-tus-progress.png` });
    await page.getByTestId("upload-status").filter({ hasText: "notes.txt attached." }).waitFor({
      timeout: 30_000,
    });
    await page.getByTestId("attachment").filter({ hasText: "notes.txt" }).waitFor();
    expect(await page.getByTestId("attachment").textContent()).toContain("7.0 MB · text/plain");
    expect(resumable[0]).toBe("POST /storage/v1/upload/resumable/sign");
    expect(resumable.some((r) => r.startsWith("PATCH /storage/v1/upload/resumable/sign/"))).toBe(
      true,
    );
    // the bar moved with TUS's chunks (the first is 6 MB of 7); its last step and its removal may
    // land in one render, so reaching 100% on screen is not asserted
    expect(await progress()).toBeGreaterThan(0.5);
    expect(await page.getByTestId("upload-progress").count()).toBe(0);
  });

  test("Cancel stops an upload and takes its row back", async ({ browser }) => {
    const owner = await freshUser(stack, "cancel");
    const page = await browser.open();
    await signInWithPassword(page, stack, owner);
    const notePath = await newNote(page, "Cancelled");
    // a slow uplink (256 KB/s), so that the upload is still going when Cancel is pressed
    const cdp = await page.context().newCDPSession(page);
    await cdp.send("Network.enable");
    await cdp.send("Network.emulateNetworkConditions", {
      offline: false,
      latency: 0,
      downloadThroughput: -1,
      uploadThroughput: 256 * 1024,
    });
    await drop(page, { name: "slow.txt", type: "text/plain", size: 7 * 1024 * 1024 });
    await page.getByTestId("upload-progress").waitFor();
    await page.getByRole("button", { name: "Cancel upload" }).click();
    await page
      .getByTestId("upload-status")
      .filter({ hasText: "Upload of slow.txt cancelled." })
      .waitFor();
    expect(await page.getByTestId("upload-progress").count()).toBe(0);
    expect(await page.getByTestId("attachment-error").count()).toBe(0);
    await cdp.send("Network.emulateNetworkConditions", {
      offline: false,
      latency: 0,
      downloadThroughput: -1,
      uploadThroughput: -1,
    });
    await visit(page, stack, notePath);
    expect(await page.getByTestId("attachment").count()).toBe(0);
    expect(await page.getByText("No files attached.").count()).toBe(1);
  });
});
