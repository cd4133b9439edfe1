// How objects are served (upstream's renderer, plus the local sandboxing: the backend shares a host
// with the app), ranges and conditional requests, and what is refused before any byte is stored:
// hostile keys (upstream's allow-list), the bucket's size limit and MIME types.
import { createHash, randomBytes } from "node:crypto";
import { request as httpRequest } from "node:http";
import { describe, expect, test } from "vitest";
import { member, PUBLISHABLE_KEY, STORAGE_URL, storageFetch } from "./support.ts";

describe("the bytes", () => {
  test("a file of several reads comes whole and in ranges; a client that leaves mid-way stops nothing else", async () => {
    const owner = await member();
    const path = `${owner.id}/big.bin`;
    // 3 MiB and a bit: the file is read 1 MiB at a time, straight into the socket
    const bytes = new Uint8Array(3 * 1024 * 1024 + 17).map((_, i) => (i * 7 + (i >> 12)) & 255);
    const { error } = await owner.client.storage
      .from("storage-private")
      .upload(path, bytes, { contentType: "application/octet-stream" });
    expect(error).toBeNull();

    const whole = await storageFetch(`/object/storage-private/${path}`, { token: owner.token });
    expect(whole.headers.get("content-length")).toBe(String(bytes.length));
    expect(Buffer.compare(Buffer.from(await whole.arrayBuffer()), Buffer.from(bytes))).toBe(0);

    // across the first read's end
    const from = 1024 * 1024 - 5;
    const to = 2 * 1024 * 1024 + 4;
    const part = await storageFetch(`/object/storage-private/${path}`, {
      token: owner.token,
      headers: { range: `bytes=${from}-${to}` },
    });
    expect(part.status).toBe(206);
    expect(
      Buffer.compare(
        Buffer.from(await part.arrayBuffer()),
        Buffer.from(bytes.subarray(from, to + 1)),
      ),
    ).toBe(0);

    // a reader that goes away after the first chunk: the next requests are answered as usual
    const left = await storageFetch(`/object/storage-private/${path}`, { token: owner.token });
    const reader = (left.body as ReadableStream<Uint8Array>).getReader();
    expect((await reader.read()).value?.length).toBeGreaterThan(0);
    await reader.cancel();
    const again = await storageFetch(`/object/storage-private/${path}`, {
      token: owner.token,
      headers: { range: "bytes=-3" },
    });
    expect([...new Uint8Array(await again.arrayBuffer())]).toEqual([...bytes.subarray(-3)]);
    const removed = await owner.client.storage.from("storage-private").remove([path]);
    expect(removed.error).toBeNull();
    expect(removed.data).toHaveLength(1);
  });

  test("a reader slower than the socket gets every byte in order: a read buffer is filled again only once the socket sent it", async () => {
    const owner = await member();
    const path = `${owner.id}/slow.bin`;
    // more than the socket buffers hold, so the server's writes wait on the reader
    const bytes = randomBytes(12 * 1024 * 1024 + 3);
    const bucket = owner.client.storage.from("storage-private");
    expect((await bucket.upload(path, new Uint8Array(bytes))).error).toBeNull();
    const response = await new Promise<import("node:http").IncomingMessage>((resolve, reject) => {
      httpRequest(`${STORAGE_URL}/object/storage-private/${path}`, {
        headers: { apikey: PUBLISHABLE_KEY, authorization: `Bearer ${owner.token}` },
      })
        .once("response", resolve)
        .once("error", reject)
        .end();
    });
    await new Promise((r) => setTimeout(r, 300));
    const chunks: Buffer[] = [];
    for await (const chunk of response) chunks.push(chunk);
    expect(Buffer.compare(Buffer.concat(chunks), bytes)).toBe(0);
    expect((await bucket.remove([path])).error).toBeNull();
  });

  test("an upload of several batches, raw or multipart, is kept whole with its bytes' MD5 as ETag; one cut off leaves nothing", async () => {
    const owner = await member();
    const bucket = owner.client.storage.from("storage-private");
    const bytes = randomBytes(3 * 1024 * 1024 + 17);
    const md5 = `"${createHash("md5").update(bytes).digest("hex")}"`;
    // storage-js sends a Uint8Array as the raw body, a Blob as multipart/form-data
    for (const [name, body] of [
      ["raw.bin", new Uint8Array(bytes)],
      ["multipart.bin", new Blob([bytes])],
    ] as const) {
      const path = `${owner.id}/${name}`;
      const { error } = await bucket.upload(path, body, {
        contentType: "application/octet-stream",
      });
      expect(error).toBeNull();
      const got = await storageFetch(`/object/storage-private/${path}`, { token: owner.token });
      expect(got.headers.get("etag")).toBe(md5);
      expect(Buffer.compare(Buffer.from(await got.arrayBuffer()), bytes)).toBe(0);
    }
    const { data: listed } = await bucket.list(owner.id);
    expect(listed?.map((o) => [o.name, o.metadata?.eTag])).toEqual([
      ["multipart.bin", md5],
      ["raw.bin", md5],
    ]);

    // a client that goes away after 2 of its 3 MiB: no object, and the key is still free
    const cut = `${owner.id}/cut.bin`;
    const request = httpRequest(`${STORAGE_URL}/object/storage-private/${cut}`, {
      method: "POST",
      headers: {
        apikey: PUBLISHABLE_KEY,
        authorization: `Bearer ${owner.token}`,
        "content-type": "application/octet-stream",
        "content-length": String(bytes.length),
      },
    });
    request.on("error", () => {});
    await new Promise<void>((resolve) =>
      request.write(bytes.subarray(0, 2 << 20), () => resolve()),
    );
    await new Promise((r) => setTimeout(r, 100));
    request.destroy();
    await new Promise((r) => setTimeout(r, 100));
    const missing = await storageFetch(`/object/info/storage-private/${cut}`, {
      token: owner.token,
    });
    expect(await missing.json()).toMatchObject({ statusCode: "404", code: "NoSuchKey" });
    const again = await bucket.upload(cut, new Uint8Array(bytes));
    expect(again.error).toBeNull();
    const head = await storageFetch(`/object/storage-private/${cut}`, {
      token: owner.token,
      method: "HEAD",
    });
    expect(head.headers.get("etag")).toBe(md5);
  });
});

describe("the served headers", () => {
  test("an HTML file goes out as text/plain, sandboxed, as an attachment, with upstream's headers", async () => {
    const owner = await member();
    const path = `${owner.id}/page.html`;
    await owner.client.storage
      .from("storage-private")
      .upload(path, "<script>alert(document.cookie)</script>", {
        contentType: "text/html",
        cacheControl: "120",
      });
    const response = await storageFetch(`/object/authenticated/storage-private/${path}`, {
      token: owner.token,
    });
    expect(response.status).toBe(200);
    expect(Object.fromEntries(response.headers)).toMatchObject({
      "content-type": "text/plain",
      "cache-control": "max-age=120",
      "accept-ranges": "bytes",
      "x-robots-tag": "none",
      "x-content-type-options": "nosniff",
      "content-security-policy": "sandbox",
      "content-disposition": "attachment",
      "content-length": "39",
    });
    const etag = response.headers.get("etag");
    expect(etag).toMatch(/^"[0-9a-f]{32}"$/);
    expect(new Date(response.headers.get("last-modified") ?? "").getTime()).toBeGreaterThan(0);
    await response.arrayBuffer();

    const cached = await storageFetch(`/object/authenticated/storage-private/${path}`, {
      token: owner.token,
      headers: { "if-none-match": etag ?? "" },
    });
    expect(cached.status).toBe(304);

    const named = await storageFetch(
      `/object/authenticated/storage-private/${path}?download=r%C3%A9sum%C3%A9.html`,
      { token: owner.token },
    );
    expect(named.headers.get("content-disposition")).toBe(
      "attachment; filename=r%C3%A9sum%C3%A9.html; filename*=UTF-8''r%C3%A9sum%C3%A9.html",
    );
    await named.arrayBuffer();
  });

  test("an image is served inline, without the sandbox; a range is a 206, a bad one upstream's 416", async () => {
    const owner = await member();
    const path = `${owner.id}/pixel.png`;
    const bytes = new Uint8Array(40).map((_, i) => i);
    await owner.client.storage
      .from("storage-private")
      .upload(path, bytes, { contentType: "image/png" });
    const whole = await storageFetch(`/object/storage-private/${path}`, { token: owner.token });
    expect(whole.headers.get("content-type")).toBe("image/png");
    expect(whole.headers.get("content-security-policy")).toBeNull();
    expect(whole.headers.get("content-disposition")).toBeNull();
    expect(whole.headers.get("x-content-type-options")).toBe("nosniff");
    expect(new Uint8Array(await whole.arrayBuffer())).toEqual(bytes);

    const part = await storageFetch(`/object/storage-private/${path}`, {
      token: owner.token,
      headers: { range: "bytes=10-19" },
    });
    expect(part.status).toBe(206);
    expect(part.headers.get("content-range")).toBe("bytes 10-19/40");
    expect([...new Uint8Array(await part.arrayBuffer())]).toEqual([
      10, 11, 12, 13, 14, 15, 16, 17, 18, 19,
    ]);
    const suffix = await storageFetch(`/object/storage-private/${path}`, {
      token: owner.token,
      headers: { range: "bytes=-5" },
    });
    expect(suffix.headers.get("content-range")).toBe("bytes 35-39/40");
    await suffix.arrayBuffer();
    const beyond = await storageFetch(`/object/storage-private/${path}`, {
      token: owner.token,
      headers: { range: "bytes=50-60" },
    });
    expect(beyond.status).toBe(416);
    expect(await beyond.json()).toEqual({
      statusCode: "416",
      code: "InvalidRange",
      error: "invalid_range",
      message: "invalid range provided",
    });

    const head = await storageFetch(`/object/storage-private/${path}`, {
      token: owner.token,
      method: "HEAD",
    });
    expect(head.status).toBe(200);
    expect(head.headers.get("content-length")).toBe("40");
  });

  test("a public bucket's object is served to anyone, without a key; a private one's is not", async () => {
    const owner = await member();
    const path = `${owner.id}/open.txt`;
    await owner.client.storage.from("storage-public").upload(path, "for all");
    const { data } = owner.client.storage.from("storage-public").getPublicUrl(path);
    const response = await fetch(data.publicUrl);
    expect(response.status).toBe(200);
    expect(await response.text()).toBe("for all");

    await owner.client.storage.from("storage-private").upload(path, "not for all");
    const hidden = await fetch(
      owner.client.storage.from("storage-private").getPublicUrl(path).data.publicUrl,
    );
    expect(hidden.status).toBe(400);
    expect((await hidden.json()).message).toBe("Bucket not found");
  });
});

describe("refused before anything is stored", () => {
  test('a hostile key, as storage-js sends it: "Résumé.pdf" is 400 InvalidKey, as on hosted', async () => {
    const owner = await member();
    const { error } = await owner.client.storage
      .from("storage-private")
      .upload(`${owner.id}/Résumé.pdf`, "x");
    expect(error).toMatchObject({
      statusCode: "400",
      message: `Invalid key: ${owner.id}/Résumé.pdf`,
    });
    expect((error as unknown as { code?: string }).code).toBe("InvalidKey");
  });

  test.each([
    ["emoji-%F0%9F%98%80.txt", "emoji-😀.txt"],
    ["back%5Cslash.txt", "back\\slash.txt"],
    ["tab%09.txt", "tab\t.txt"],
    ["nul%00.txt", "nul\u0000.txt"],
    ["quote%22.txt", 'quote".txt'],
    ["percent%25.txt", "percent%.txt"],
    ["bad%E9.txt", "bad%E9.txt"],
  ])("a hostile key on the wire %s: 400 InvalidKey, nothing stored", async (encoded) => {
    const owner = await member();
    const response = await storageFetch(`/object/storage-private/${owner.id}/${encoded}`, {
      token: owner.token,
      method: "POST",
      headers: { "content-type": "text/plain" },
      body: "x",
    });
    expect(response.status).toBe(400);
    expect((await response.json()).code).toBe("InvalidKey");
    expect((await owner.client.storage.from("storage-private").list(owner.id)).data).toEqual([]);
  });

  test("dot segments never leave the bucket's folder: a key is a name, not a path", async () => {
    const owner = await member();
    // (%2F inside one segment: a URL parser would resolve `/../` before it is sent)
    const key = `${owner.id}/..%2F..%2F..%2Fetc%2Fpasswd`;
    // allowed characters, so a valid key; RLS judges it by its first segment, as upstream
    const stored = await storageFetch(`/object/storage-private/${key}`, {
      token: owner.token,
      method: "POST",
      headers: { "content-type": "text/plain" },
      body: "not a system file",
    });
    expect(await stored.json()).toMatchObject({
      Key: `storage-private/${owner.id}/../../../etc/passwd`,
    });
    const read = await storageFetch(`/object/storage-private/${key}`, { token: owner.token });
    expect(await read.text()).toBe("not a system file");
    const other = await storageFetch("/object/storage-private/..%2F..%2Fpasswd", {
      token: owner.token,
    });
    expect(other.status).toBe(400);
    expect((await other.json()).code).toBe("NoSuchKey");
  });

  test("a cacheControl or content type no header can carry (a form field, a copy's metadata): refused, so no download of it fails", async () => {
    const owner = await member();
    const form = (name: string, value: string) =>
      `--XX\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n` +
      '--XX\r\nContent-Disposition: form-data; name="file"; filename="a"\r\n\r\nA\r\n--XX--\r\n';
    for (const [name, value, code] of [
      ["cacheControl", "60\r\nSet-Cookie: a=b", "InvalidParameter"],
      ["contentType", "text/plain\r\nSet-Cookie: a=b", "InvalidMimeType"],
      ["contentType", "text/plain; charset=€", "InvalidMimeType"],
    ]) {
      const response = await storageFetch(`/object/storage-private/${owner.id}/${name}.txt`, {
        token: owner.token,
        method: "POST",
        headers: { "content-type": "multipart/form-data; boundary=XX" },
        body: form(name as string, value as string),
      });
      expect(response.status).toBe(400);
      expect((await response.json()).code).toBe(code);
    }
    const bucket = owner.client.storage.from("storage-private");
    await bucket.upload(`${owner.id}/source.txt`, "x");
    const copy = await storageFetch("/object/copy", {
      token: owner.token,
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({
        bucketId: "storage-private",
        sourceKey: `${owner.id}/source.txt`,
        destinationKey: `${owner.id}/copy.txt`,
        copyMetadata: false,
        metadata: { cacheControl: "60\nSet-Cookie: a=b" },
      }),
    });
    expect((await copy.json()).code).toBe("InvalidParameter");
    expect((await bucket.list(owner.id)).data?.map((o) => o.name)).toEqual(["source.txt"]);
  });

  test("the bucket's size limit and MIME types: 413 EntityTooLarge, 415 InvalidMimeType", async () => {
    const owner = await member();
    const bucket = owner.client.storage.from("storage-limited");
    const png = (size: number) => new Blob([new Uint8Array(size)], { type: "image/png" });
    expect((await bucket.upload(`${owner.id}/small.png`, png(64))).error).toBeNull();
    expect((await bucket.upload(`${owner.id}/big.png`, png(65))).error).toMatchObject({
      statusCode: "413",
      message: "The object exceeded the maximum allowed size",
    });
    // without Content-Length (a stream): cut off while it streams
    const stream = new ReadableStream({
      start(controller) {
        controller.enqueue(new Uint8Array(50));
        controller.enqueue(new Uint8Array(50));
        controller.close();
      },
    });
    const streamed = await storageFetch(`/object/storage-limited/${owner.id}/streamed.png`, {
      token: owner.token,
      method: "POST",
      headers: { "content-type": "image/png" },
      body: stream,
      duplex: "half",
    } as RequestInit);
    expect(streamed.status).toBe(400);
    expect((await streamed.json()).statusCode).toBe("413");
    expect((await bucket.exists(`${owner.id}/streamed.png`)).data).toBe(false);
    expect(
      (await bucket.upload(`${owner.id}/text.png`, new Blob(["x"], { type: "text/plain" }))).error,
    ).toMatchObject({ statusCode: "415", message: "mime type text/plain is not supported" });
  });
});
