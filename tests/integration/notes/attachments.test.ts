// Attachments through the Worker with JavaScript off: a multipart form post attaches a file (the
// row first, then the bytes, as the user), the note page lists it with signed URLs that live at
// most 5 minutes, the recipient sees it and a stranger nothing, an unshare ends the next read,
// bad files get a clear message and leave nothing behind, and deleting notes leaves no files.
import { describe, expect, it } from "vitest";
import { APP_URL, BACKEND_URL } from "../support/app";
import { adminClient, signedInBrowser, testId } from "../support/auth-flows";
import type { BrowserLess } from "../support/browser-less";
import { createNote } from "../support/notes";

const PNG = Uint8Array.from(
  atob(
    "iVBORw0KGgoAAAANSUhEUgAAAAIAAAACCAIAAAD91JpzAAAACXBIWXMAAAPoAAAD6AG1e1JrAAAAEklEQVQImWM4YSNywkaEAUIBACF+BGFPob/gAAAAAElFTkSuQmCC",
  ),
  (c) => c.charCodeAt(0),
);

function attach(browser: BrowserLess, id: string, file: File) {
  const form = new FormData();
  form.set("intent", "attach");
  form.set("file", file);
  return browser.postMultipart(`/notes/${id}/attachments`, form);
}

/** The signed URLs of the page's attachments (img src and download links), decoded. */
function signedUrls(body: string): string[] {
  return [
    ...body.matchAll(/(?:src|href)="([^"]*\/storage\/v1\/(?:object|render\/image)\/sign\/[^"]*)"/g),
  ].map((m) => (m[1] ?? "").replaceAll("&amp;", "&"));
}

/** The src of each thumbnail on the page, decoded. */
function thumbnails(body: string): string[] {
  return [...body.matchAll(/<img[^>]*src="([^"]*\/storage\/v1\/[^"]*)"/g)].map((m) =>
    (m[1] ?? "").replaceAll("&amp;", "&"),
  );
}

/** Every object of the user's in the attachments bucket (the service role's view). */
async function filesOf(userId: string): Promise<string[]> {
  const storage = adminClient().storage.from("attachments");
  const folders = (await storage.list(userId, { limit: 1000 })).data ?? [];
  const files: string[] = [];
  for (const folder of folders) {
    const inside = (await storage.list(`${userId}/${folder.name}`, { limit: 1000 })).data ?? [];
    files.push(...inside.map((f) => `${folder.name}/${f.name}`));
  }
  return files;
}

describe("attachments", () => {
  it("attach a picture without JavaScript: listed with size and type, a thumbnail, a 5-minute signed URL", async () => {
    const owner = await signedInBrowser();
    const id = await createNote(owner.browser, { title: "With a picture" });
    const name = "Holiday <photo> ü.png";
    const visit = await attach(owner.browser, id, new File([PNG], name, { type: "image/png" }));
    expect(visit.status).toBe(200);
    expect(new URL(visit.url).pathname).toBe(`/notes/${id}`);
    expect(testId(visit.body, "attachment-error")).toBeNull();
    expect(visit.body).toContain("Holiday &lt;photo&gt; ü.png");
    expect(visit.body).toContain(`${PNG.byteLength} B · image/png`);
    const urls = signedUrls(visit.body);
    expect(urls.length).toBe(2); // the thumbnail and the download link
    for (const url of urls) {
      const token = new URL(url).searchParams.get("token") ?? "";
      const claims = JSON.parse(atob(token.split(".")[1] ?? ""));
      expect(claims.exp - claims.iat).toBeLessThanOrEqual(300);
    }
    // The thumbnail: the picture cut to 128 px square by Storage (the test backend has image
    // transformations, as config.toml turns them on), WebP as the browser accepts it.
    const [thumbnail] = thumbnails(visit.body);
    expect(thumbnail?.startsWith(`${BACKEND_URL}/storage/v1/render/image/sign/attachments/`)).toBe(
      true,
    );
    const small = await fetch(thumbnail ?? "", { headers: { accept: "image/webp,image/*" } });
    expect(small.status).toBe(200);
    expect(small.headers.get("content-type")).toBe("image/webp");
    const claims = JSON.parse(
      atob((new URL(thumbnail ?? "").searchParams.get("token") ?? "").split(".")[1] ?? ""),
    );
    expect(claims.transformations).toContain("width:128");
    expect(claims.transformations).toContain("height:128");
    await small.arrayBuffer();
    // The download link: the file as it was sent, under its display name.
    const download = urls.find((url) => url.includes("download=")) ?? "";
    expect(download.startsWith(`${BACKEND_URL}/storage/v1/object/sign/attachments/`)).toBe(true);
    const served = await fetch(download);
    expect(served.status).toBe(200);
    expect(new Uint8Array(await served.arrayBuffer())).toEqual(PNG);
    // The key is the database's, never the file name.
    expect(new URL(download).pathname).not.toContain("Holiday");
    // The page lets the browser show Supabase images.
    const csp = visit.headers.get("Content-Security-Policy") ?? "";
    expect(/img-src ([^;]*)/.exec(csp)?.[1]?.split(" ")).toContain(new URL(BACKEND_URL).origin);
  });

  it("too big or the wrong type: a clear message, nothing stored", async () => {
    const owner = await signedInBrowser();
    const id = await createNote(owner.browser, { title: "Limits" });
    const big = await attach(
      owner.browser,
      id,
      new File([new Uint8Array(10 * 1024 * 1024 + 1)], "big.png", { type: "image/png" }),
    );
    expect(testId(big.body, "attachment-error")).toContain("larger than 10 MB");
    const html = await attach(
      owner.browser,
      id,
      new File(["<script>"], "x.html", { type: "text/html" }),
    );
    expect(testId(html.body, "attachment-error")).toContain("cannot be attached");
    const empty = await attach(owner.browser, id, new File([], "none.png", { type: "image/png" }));
    expect(testId(empty.body, "attachment-error")).toContain("Choose a file");
    expect(signedUrls(html.body)).toEqual([]);
    expect(await filesOf(owner.user.id)).toEqual([]);
  });

  it("a file posted without a length is read only up to the limit: one that never ends is answered", async () => {
    const owner = await signedInBrowser();
    const id = await createNote(owner.browser, { title: "Endless" });
    // Chunked multipart: the head of a file part, 11 MiB of it (the limit is 10 MB), then the body
    // stays open. Reading it to the end would hold the request and its memory for good.
    const head = new TextEncoder().encode(
      '--b\r\nContent-Disposition: form-data; name="file"; filename="big.png"\r\nContent-Type: image/png\r\n\r\n',
    );
    const mib = new Uint8Array(1024 * 1024);
    let sent = 0;
    const body = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent === 0) controller.enqueue(head);
        else if (sent <= 11) controller.enqueue(mib);
        sent += 1;
        // then nothing more, and never closed
      },
    });
    const response = await fetch(new URL(`/notes/${id}/attachments`, APP_URL), {
      method: "POST",
      headers: {
        "Content-Type": "multipart/form-data; boundary=b",
        Cookie: owner.browser.cookieHeader(),
        Origin: APP_URL,
      },
      body,
      duplex: "half",
      redirect: "manual",
      signal: AbortSignal.timeout(10_000),
    } as RequestInit);
    expect(response.status).toBe(303);
    expect(response.headers.get("Location")).toBe(
      `/notes/${id}?attachment_error=too_big#attachments`,
    );
    await response.body?.cancel();
    expect(await filesOf(owner.user.id)).toEqual([]);
  });

  it("the recipient sees it, a stranger gets nothing; after an unshare the next read is refused", async () => {
    const owner = await signedInBrowser();
    const reader = await signedInBrowser();
    const stranger = await signedInBrowser();
    const id = await createNote(owner.browser, { title: "Shared picture" });
    await attach(owner.browser, id, new File([PNG], "p.png", { type: "image/png" }));
    await owner.browser.post(`/notes/${id}`, { intent: "share", email: reader.email });
    const page = await reader.browser.get(`/notes/${id}`);
    const urls = signedUrls(page.body);
    expect(urls.length).toBe(2);
    expect((await fetch(urls[0] ?? "")).status).toBe(200);
    expect(page.body).not.toContain(`/notes/${id}/attachments`); // no attach or delete forms
    expect((await stranger.browser.get(`/notes/${id}`)).status).toBe(404);
    // A stranger's post to the note's attachments: a 404, nothing stored.
    const foreign = await attach(
      stranger.browser,
      id,
      new File([PNG], "s.png", { type: "image/png" }),
    );
    expect(foreign.status).toBe(404);
    expect(await filesOf(stranger.user.id)).toEqual([]);
    const owners = await owner.browser.get(`/notes/${id}`);
    expect(testId(owners.body, "revoke-note")).toContain("already downloaded");
    await owner.browser.post(`/notes/${id}`, { intent: "unshare", email: reader.email });
    expect((await reader.browser.get(`/notes/${id}`)).status).toBe(404);
  });

  it("delete a file, then the note: no files remain, and the sweep removes what a failure left", async () => {
    const owner = await signedInBrowser();
    const id = await createNote(owner.browser, { title: "Files" });
    await attach(owner.browser, id, new File([PNG], "a.png", { type: "image/png" }));
    const page = await attach(owner.browser, id, new File(["hi"], "b.txt", { type: "text/plain" }));
    expect(await filesOf(owner.user.id)).toHaveLength(2);
    const attachment = /name="attachment" value="([0-9a-f-]{36})"/.exec(page.body)?.[1] ?? "";
    const removed = await owner.browser.post(`/notes/${id}/attachments`, {
      intent: "delete-attachment",
      attachment,
    });
    expect(removed.status).toBe(200);
    expect(await filesOf(owner.user.id)).toHaveLength(1);
    // A note deleted without its files (a failure between the two steps, made here by deleting it
    // in the database directly): its file stays until the next note delete sweeps it.
    const lost = await createNote(owner.browser, { title: "Lost" });
    await attach(owner.browser, lost, new File([PNG], "c.png", { type: "image/png" }));
    await adminClient().from("notes").delete().eq("id", lost);
    expect(await filesOf(owner.user.id)).toHaveLength(2);
    const deleted = await owner.browser.post(`/notes/${id}/delete`, {});
    expect(new URL(deleted.url).pathname).toBe("/notes");
    expect(await filesOf(owner.user.id)).toEqual([]);
  });

  it("with JavaScript: start-upload checks the file, makes the row and a signed upload URL for its key; the bytes go to Storage", async () => {
    const owner = await signedInBrowser();
    const stranger = await signedInBrowser();
    const id = await createNote(owner.browser, { title: "Uploaded by the page" });
    const start = (browser: BrowserLess, file: { name: string; size: number; type: string }) =>
      browser.post(`/notes/${id}/attachments`, {
        intent: "start-upload",
        name: file.name,
        size: String(file.size),
        type: file.type,
      });
    // the same rules as the form, answered as JSON, nothing made
    const big = await start(owner.browser, {
      name: "a.png",
      size: 10 * 1024 * 1024 + 1,
      type: "image/png",
    });
    expect(big.status).toBe(400);
    expect(JSON.parse(big.body)).toEqual({
      error: "too_big",
      message: "That file is larger than 10 MB.",
    });
    const html = await start(owner.browser, { name: "a.html", size: 5, type: "text/html" });
    expect(JSON.parse(html.body)).toMatchObject({ error: "bad_type" });
    const odd = await start(owner.browser, { name: "a.png", size: Number.NaN, type: "image/png" });
    expect(JSON.parse(odd.body)).toMatchObject({ error: "no_file" });
    const negative = await start(owner.browser, { name: "a.png", size: -5, type: "image/png" });
    expect(negative.status).toBe(400);
    expect(JSON.parse(negative.body)).toMatchObject({ error: "no_file" });
    expect(
      (await start(stranger.browser, { name: "s.png", size: 5, type: "image/png" })).status,
    ).toBe(404);
    const rows = await adminClient().from("attachments").select("id").eq("note_id", id);
    expect(rows.data).toEqual([]);

    const ticket = await start(owner.browser, {
      name: "Mañana.png",
      size: PNG.byteLength,
      type: "image/png",
    });
    expect(ticket.status).toBe(200);
    expect(ticket.headers.get("Cache-Control")).toContain("no-store");
    const { id: attachmentId, path, bucket, token } = JSON.parse(ticket.body);
    expect(bucket).toBe("attachments");
    expect(path).toBe(`${owner.user.id}/${id}/${attachmentId}`);
    // before the bytes arrive the page lists the row without a link or a thumbnail
    const before = await owner.browser.get(`/notes/${id}`);
    expect(before.body).toContain("Mañana.png");
    expect(before.body).toContain("Not uploaded");
    expect(signedUrls(before.body)).toEqual([]);
    const put = await fetch(
      `${BACKEND_URL}/storage/v1/object/upload/sign/attachments/${path}?token=${token}`,
      {
        method: "PUT",
        headers: {
          "Content-Type": "image/png",
          "Cache-Control": "max-age=300",
          "x-upsert": "false",
        },
        body: PNG,
      },
    );
    expect(put.status).toBe(200);
    const page = await owner.browser.get(`/notes/${id}`);
    expect(page.body).toContain("Mañana.png");
    expect(thumbnails(page.body)).toHaveLength(1);
    // the token is for that key only, and once
    const again = await fetch(
      `${BACKEND_URL}/storage/v1/object/upload/sign/attachments/${path}?token=${token}`,
      {
        method: "PUT",
        headers: { "Content-Type": "image/png" },
        body: PNG,
      },
    );
    expect(again.ok).toBe(false);
    expect(await filesOf(owner.user.id)).toEqual([`${id}/${attachmentId}`]);
  });

  it("an upload cut off halfway: its row stays while it could still finish, and the sweep deletes it after", async () => {
    const owner = await signedInBrowser();
    const id = await createNote(owner.browser, { title: "Cut off" });
    const started = async () => {
      const ticket = await owner.browser.post(`/notes/${id}/attachments`, {
        intent: "start-upload",
        name: "never.png",
        size: "100",
        type: "image/png",
      });
      return JSON.parse(ticket.body).id as string;
    };
    const recent = await started();
    const old = await started();
    // the tab closed before any byte arrived, four hours ago (the upload URL lived two)
    const backdated = await adminClient()
      .from("attachments")
      .update({ created_at: new Date(Date.now() - 4 * 3600_000).toISOString() })
      .eq("id", old)
      .select("id");
    expect(backdated.data).toHaveLength(1);
    const other = await createNote(owner.browser, { title: "Deleted" });
    await owner.browser.post(`/notes/${other}/delete`, {});
    const rows = await adminClient().from("attachments").select("id").eq("note_id", id);
    expect(rows.data?.map((r) => r.id)).toEqual([recent]);
  });
});
