// Avatars in the browser, with JavaScript on and off: the owner picks a photo (with GPS and camera
// tags) on the profile page and uploads it; the header shows it at once, and what Storage serves
// has no metadata (with JavaScript on, the browser redrew it as a square WebP first; off, the
// Worker stripped the JPEG). The person a note is shared with sees the owner's picture on the
// note and on its card in "Shared with me", and, with JavaScript on, beside "… is also viewing".
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Locator, Page } from "playwright-core";
import sharp from "sharp";
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

/** A 900×600 phone photo on disk, for the file picker: pixels, plus where and with what. */
async function photoFile(): Promise<string> {
  const path = join(mkdtempSync(join(tmpdir(), "avatar-")), "me.jpg");
  const bytes = await sharp({
    create: { width: 900, height: 600, channels: 3, background: "#2957d9" },
  })
    .composite([
      {
        input: Buffer.from(
          '<svg width="300" height="300"><circle cx="150" cy="150" r="140" fill="#f5c542"/></svg>',
        ),
        left: 300,
        top: 150,
      },
    ])
    .withExif({
      IFD0: { Make: "SecretCam", Model: "Spy 3000" },
      IFD3: { GPSLatitudeRef: "N", GPSLatitude: "51/1 30/1 26/1" },
    })
    .jpeg()
    .toBuffer();
  writeFileSync(path, bytes);
  return path;
}

/** Whether an image was fetched and decoded (not blocked by the CSP, not refused). */
async function loaded(image: Locator): Promise<boolean> {
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

/** The letters an initials avatar inside `where` shows (drawn by CSS from its attribute). */
async function initialsIn(where: Locator): Promise<string | null> {
  const avatar = where.getByTestId("avatar-initials");
  await avatar.waitFor();
  return avatar.evaluate((span) => getComputedStyle(span, "::before").content.replaceAll('"', ""));
}

const headerAvatar = (page: Page) => page.getByTestId("header-avatar").getByTestId("avatar-image");

describe.each([
  { javaScriptEnabled: true, label: "JavaScript on" },
  { javaScriptEnabled: false, label: "JavaScript off" },
])("avatars ($label)", ({ javaScriptEnabled }) => {
  test("upload a picture, see it in the header; the reader sees it on the shared note", async ({
    browser,
  }) => {
    const owner = await freshUser(stack, "owner", "Ada Lovelace");
    const reader = await freshUser(stack, "reader", "Grace Hopper");
    const page = await browser.open({ javaScriptEnabled });
    await signInWithPassword(page, stack, owner);
    await visit(page, stack, "/account");
    // No picture yet: initials.
    expect(await initialsIn(page.getByTestId("header-avatar"))).toBe("AL");

    await page.setInputFiles('input[name="avatar"]', await photoFile());
    if (javaScriptEnabled) await page.getByTestId("avatar-preview").waitFor();
    await submit(page, "Upload");
    await arrivedAt(page, stack, "/account");
    await page.getByText("Your picture was saved.").waitFor();
    expect(await loaded(headerAvatar(page))).toBe(true);

    // What anyone can fetch: no location, no camera; redrawn square by the browser with
    // JavaScript, the original's pixels without.
    const src = (await headerAvatar(page).getAttribute("src")) ?? "";
    const path = /\/avatars\/(.+?)(\?|$)/.exec(src)?.[1] ?? "";
    const served = await fetch(`${stack.backendUrl}/storage/v1/object/public/avatars/${path}`);
    const bytes = Buffer.from(await served.arrayBuffer());
    const meta = await sharp(bytes).metadata();
    expect(meta.exif).toBeUndefined();
    expect(bytes.includes("SecretCam")).toBe(false);
    expect([meta.format, meta.width, meta.height]).toEqual(
      javaScriptEnabled ? ["webp", 512, 512] : ["jpeg", 900, 600],
    );

    await visit(page, stack, "/notes/new");
    await page.fill("#field-title", "Engines");
    await submit(page, "Create note");
    const notePath = await arrivedAt(page, stack, NOTE_PAGE);
    expect(await loaded(headerAvatar(page))).toBe(true);
    await page.fill("#field-email", reader.email);
    await submit(page, "Share");
    await page.getByTestId("share-list").waitFor();

    const readerPage = await browser.open({ javaScriptEnabled });
    await signInWithPassword(readerPage, stack, reader);
    await visit(readerPage, stack, notePath);
    const byline = readerPage.getByTestId("note-owner");
    expect(await loaded(byline.getByTestId("avatar-image"))).toBe(true);
    expect(await byline.textContent()).toContain("Shared by Ada Lovelace");
    // The reader has no picture: initials in their header.
    expect(await initialsIn(readerPage.getByTestId("header-avatar"))).toBe("GH");
    // Their "Shared with me" list: the owner's picture beside "Shared by".
    await visit(readerPage, stack, "/notes?view=shared");
    const card = readerPage.getByTestId("note-card").filter({ hasText: "Engines" });
    expect(await card.getByTestId("note-owner").textContent()).toContain("Shared by Ada Lovelace");
    expect(await loaded(card.getByTestId("note-owner").getByTestId("avatar-image"))).toBe(true);
    await visit(readerPage, stack, notePath);

    if (javaScriptEnabled) {
      // Both on the note: each sees the other beside "is also viewing", the owner's picture too.
      await readerPage.getByTestId("viewers").waitFor();
      expect(await readerPage.getByTestId("viewers").textContent()).toContain(
        "Ada Lovelace is also viewing",
      );
      const beside = readerPage.getByTestId("viewer-avatars").getByTestId("avatar-image");
      expect(await loaded(beside)).toBe(true);
      await page.getByTestId("viewers").waitFor();
      expect(await initialsIn(page.getByTestId("viewer-avatars"))).toBe("GH");
    }

    // Removed: initials again, everywhere.
    await visit(page, stack, "/account");
    await submit(page, "Remove picture");
    await page.getByText("Your picture was removed.").waitFor();
    expect(await headerAvatar(page).count()).toBe(0);
    await visit(readerPage, stack, notePath);
    expect(await initialsIn(byline)).toBe("AL");
  });
});
