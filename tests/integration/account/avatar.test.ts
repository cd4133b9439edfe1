// The profile's picture through the Worker with JavaScript off: a multipart form post stores it
// in the public avatars bucket without its metadata (a JPEG with EXIF GPS and camera tags comes
// out with none), the header shows it at once (the refreshed token carries its path), a new one
// replaces it and the old version is gone, wrong files get a clear message and store nothing,
// and Remove leaves initials and an empty folder. Decision 036.
import sharp from "sharp";
import { describe, expect, it } from "vitest";
import { BACKEND_URL } from "../support/app";
import { adminClient, signedInBrowser, testId } from "../support/auth-flows";
import type { BrowserLess } from "../support/browser-less";
import { createNote } from "../support/notes";

const EXIF = {
  IFD0: { Make: "SecretCam", Model: "Spy 3000", Artist: "Ada at home", Orientation: "1" },
  IFD3: {
    GPSLatitudeRef: "N",
    GPSLatitude: "51/1 30/1 2600/100",
    GPSLongitudeRef: "W",
    GPSLongitude: "0/1 7/1 3900/100",
  },
};

/** A photo as a phone makes one: pixels, plus where and with what it was taken. */
async function photo(
  format: "jpeg" | "png" | "webp" = "jpeg",
  width = 120,
): Promise<Uint8Array<ArrayBuffer>> {
  const buffer = await sharp({ create: { width, height: 90, channels: 3, background: "#3b6ef5" } })
    .withExif(EXIF)
    .toFormat(format)
    .toBuffer();
  return new Uint8Array(buffer);
}

function upload(browser: BrowserLess, file: File) {
  const form = new FormData();
  form.set("intent", "upload");
  form.set("avatar", file);
  return browser.postMultipart("/account/avatar", form);
}

/** The user's objects in the avatars bucket (the service role's view). */
async function versionsOf(userId: string): Promise<string[]> {
  const { data } = await adminClient().storage.from("avatars").list(userId, { limit: 100 });
  return (data ?? []).map((o) => `${userId}/${o.name}`);
}

/** The header's avatar picture URL, or null when it shows initials. */
function headerPicture(body: string): string | null {
  const header = /<header[\s\S]*?<\/header>/.exec(body)?.[0] ?? "";
  const src = /<img[^>]*src="([^"]+)"[^>]*data-testid="avatar-image"/.exec(header)?.[1];
  return src ? src.replaceAll("&amp;", "&") : null;
}

describe("avatars", () => {
  it("a JPEG with GPS and camera tags is stored with none, and shown in the header at once", async () => {
    const { browser, user } = await signedInBrowser();
    const original = await photo("jpeg");
    expect((await sharp(original).metadata()).exif).toBeDefined();
    expect(Buffer.from(original).includes("SecretCam")).toBe(true);
    const visit = await upload(browser, new File([original], "me.jpg", { type: "image/jpeg" }));
    expect(new URL(visit.url).pathname).toBe("/account");
    expect(testId(visit.body, "avatar-error")).toBeNull();
    expect(visit.body).toContain("Your picture was saved.");

    const [path] = await versionsOf(user.id);
    expect(path).toMatch(new RegExp(`^${user.id}/[0-9a-z-]+\\.jpg$`));
    const profile = await adminClient()
      .from("profiles")
      .select("avatar_path")
      .eq("id", user.id)
      .single();
    expect(profile.data?.avatar_path).toBe(path);

    // What anyone gets from the public URL: the pixels, nothing else.
    const stored = await fetch(`${BACKEND_URL}/storage/v1/object/public/avatars/${path}`);
    expect(stored.status).toBe(200);
    expect(stored.headers.get("Content-Type")).toBe("image/jpeg");
    const bytes = Buffer.from(await stored.arrayBuffer());
    const meta = await sharp(bytes).metadata();
    expect([meta.exif, meta.xmp, meta.iptc]).toEqual([undefined, undefined, undefined]);
    for (const leak of ["SecretCam", "Spy 3000", "Ada at home", "Exif"]) {
      expect(bytes.includes(leak), leak).toBe(false);
    }
    expect([meta.width, meta.height]).toEqual([120, 90]);

    // The header, on the page the redirect landed on and on the next, names this version,
    // resized by Storage: the test backend has image transformations (config.toml), which the
    // Worker learns once per isolate (a page waits for that answer at most 300 ms).
    expect(headerPicture(visit.body)).toContain(`/avatars/${path}`);
    let header: string | null = null;
    for (let i = 0; i < 5 && !header?.includes("/render/image/"); i++) {
      header = headerPicture((await browser.get("/notes")).body);
    }
    expect(header).toBe(
      `${BACKEND_URL}/storage/v1/render/image/public/avatars/${path}?width=56&height=56&resize=cover`,
    );
    const resized = await fetch(header ?? "", { headers: { Accept: "image/webp" } });
    expect(resized.status).toBe(200);
    const small = await sharp(Buffer.from(await resized.arrayBuffer())).metadata();
    expect([small.width, small.height]).toEqual([56, 56]);
  });

  it("a new picture replaces the old one: a new name, and the old version is removed", async () => {
    const { browser, user } = await signedInBrowser();
    await upload(browser, new File([await photo("png")], "a.png", { type: "image/png" }));
    const [first] = await versionsOf(user.id);
    expect(first).toMatch(/\.png$/);
    const again = await upload(
      browser,
      new File([await photo("webp")], "b.webp", { type: "image/webp" }),
    );
    expect(again.body).toContain("Your picture was saved.");
    const now = await versionsOf(user.id);
    expect(now).toHaveLength(1);
    expect(now[0]).not.toBe(first);
    expect(now[0]).toMatch(/\.webp$/);
    expect(headerPicture(again.body)).toContain(`/avatars/${now[0]}`);
    const old = await fetch(`${BACKEND_URL}/storage/v1/object/public/avatars/${first}`);
    expect(old.status).not.toBe(200);
    const webp = Buffer.from(
      await (
        await fetch(`${BACKEND_URL}/storage/v1/object/public/avatars/${now[0]}`)
      ).arrayBuffer(),
    );
    expect((await sharp(webp).metadata()).exif).toBeUndefined();
    expect(webp.includes("SecretCam")).toBe(false);
  });

  it("the wrong type, too big, not an image or no file: a clear message, nothing stored", async () => {
    const { browser, user } = await signedInBrowser();
    const cases: [File, string][] = [
      [
        new File(["<svg onload=alert(1)>"], "x.svg", { type: "image/svg+xml" }),
        "cannot be an avatar",
      ],
      [new File(["GIF89a"], "x.gif", { type: "image/gif" }), "cannot be an avatar"],
      [
        new File([new Uint8Array(2 * 1024 * 1024 + 1)], "big.png", { type: "image/png" }),
        "larger than 2 MB",
      ],
      [new File(["not a picture"], "fake.png", { type: "image/png" }), "not a PNG, JPEG or WebP"],
      // A JPEG cut short: its end never comes.
      [
        new File([(await photo("jpeg")).subarray(0, 200)], "cut.jpg", { type: "image/jpeg" }),
        "not a PNG, JPEG or WebP",
      ],
      [new File([], "none.png", { type: "image/png" }), "Choose a picture"],
    ];
    for (const [file, message] of cases) {
      const visit = await upload(browser, file);
      expect(visit.status, file.name).toBe(200);
      expect(testId(visit.body, "avatar-error"), file.name).toContain(message);
    }
    expect(await versionsOf(user.id)).toEqual([]);
    expect(headerPicture((await browser.get("/account")).body)).toBeNull();
  });

  it("Remove picture: initials again and no version left", async () => {
    const { browser, user } = await signedInBrowser();
    await upload(browser, new File([await photo("jpeg")], "me.jpg", { type: "image/jpeg" }));
    expect(await versionsOf(user.id)).toHaveLength(1);
    const removed = await browser.post("/account/avatar", { intent: "remove" });
    expect(removed.body).toContain("Your picture was removed.");
    expect(headerPicture(removed.body)).toBeNull();
    expect(testId(removed.body, "avatar-initials")).not.toBeNull();
    expect(await versionsOf(user.id)).toEqual([]);
  });

  it("the people a note is shared with see its owner's picture; others keep their initials", async () => {
    const owner = await signedInBrowser();
    const reader = await signedInBrowser();
    await upload(owner.browser, new File([await photo("jpeg")], "me.jpg", { type: "image/jpeg" }));
    const [path] = await versionsOf(owner.user.id);
    const id = await createNote(owner.browser, { title: "From the owner" });
    await owner.browser.post(`/notes/${id}`, { intent: "share", email: reader.email });
    const page = await reader.browser.get(`/notes/${id}`);
    const byline = /data-testid="note-owner"[\s\S]*?<\/span><\/span>/.exec(page.body)?.[0] ?? "";
    expect(byline).toContain(`/avatars/${path}`);
    // The reader has none: initials in their own header.
    const header = /<header[\s\S]*?<\/header>/.exec(page.body)?.[0] ?? "";
    expect(header).toContain('data-testid="avatar-initials"');
  });
});
