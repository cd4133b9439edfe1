// An upload's X-Robots-Tag (upstream v1.60.2's): checked by upstream's rules, refused with
// its error when invalid, kept in the object's metadata and sent back instead of `none` wherever
// the object is served as an asset (download, public and signed URLs, copies); upstream's HEAD
// routes (object info) keep sending `none`.
import { describe, expect, test } from "vitest";
import { member, STORAGE_URL, storageFetch } from "./support.ts";

describe("X-Robots-Tag", () => {
  test("a valid one is kept in the metadata and served on download, public and signed URLs; without one, none", async () => {
    const owner = await member();
    const path = `${owner.id}/indexed.txt`;
    const bucket = owner.client.storage.from("storage-public");
    const uploaded = await bucket.upload(path, "hello", {
      contentType: "text/plain",
      headers: { "x-robots-tag": "max-snippet: 10, notranslate" },
    });
    expect(uploaded.error).toBeNull();
    const listed = await bucket.list(owner.id);
    expect(listed.data?.[0]?.metadata).toMatchObject({
      xRobotsTag: "max-snippet: 10, notranslate",
    });

    const download = await storageFetch(`/object/authenticated/storage-public/${path}`, {
      token: owner.token,
    });
    expect(download.headers.get("x-robots-tag")).toBe("max-snippet: 10, notranslate");
    expect(await download.text()).toBe("hello");
    const publicUrl = bucket.getPublicUrl(path).data.publicUrl;
    const open = await fetch(publicUrl);
    expect(open.headers.get("x-robots-tag")).toBe("max-snippet: 10, notranslate");
    await open.arrayBuffer();
    const signed = await bucket.createSignedUrl(path, 60);
    const viaLink = await fetch(signed.data?.signedUrl ?? "");
    expect(viaLink.headers.get("x-robots-tag")).toBe("max-snippet: 10, notranslate");
    await viaLink.arrayBuffer();
    // HEAD on a signed URL is its GET without the body (Fastify's exposed HEAD route)...
    const signedHead = await fetch(signed.data?.signedUrl ?? "", { method: "HEAD" });
    expect(signedHead.headers.get("x-robots-tag")).toBe("max-snippet: 10, notranslate");
    // ...while upstream's HEAD /object/[authenticated/|public/] (object info) sends none
    const head = await fetch(publicUrl, { method: "HEAD" });
    expect(head.status).toBe(200);
    expect(head.headers.get("x-robots-tag")).toBe("none");

    // a copy keeps it (upstream copies the source's metadata); an upsert without it drops it
    expect((await bucket.copy(path, `${owner.id}/copy.txt`)).error).toBeNull();
    const copy = await fetch(bucket.getPublicUrl(`${owner.id}/copy.txt`).data.publicUrl);
    expect(copy.headers.get("x-robots-tag")).toBe("max-snippet: 10, notranslate");
    await copy.arrayBuffer();
    expect((await bucket.upload(path, "again", { upsert: true })).error).toBeNull();
    const relisted = await bucket.list(owner.id, { search: "indexed" });
    expect(relisted.data?.[0]?.metadata).not.toHaveProperty("xRobotsTag");
    const replaced = await fetch(publicUrl);
    expect(replaced.headers.get("x-robots-tag")).toBe("none");
    await replaced.arrayBuffer();
  });

  test("an invalid one is refused with upstream's error, nothing stored", async () => {
    const owner = await member();
    const path = `${owner.id}/refused.txt`;
    const refused = await storageFetch(`/object/storage-private/${path}`, {
      method: "POST",
      token: owner.token,
      headers: { "content-type": "text/plain", "x-robots-tag": "invalidrule" },
      body: "hello",
    });
    expect(refused.status).toBe(400);
    expect(await refused.json()).toEqual({
      statusCode: "400",
      code: "InvalidRequest",
      error: "invalid_x_robots_tag",
      message: 'Invalid X-Robots-Tag header: Invalid X-Robots-Tag rule: "invalidrule"',
    });
    const missing = await storageFetch(`/object/storage-private/${path}`, { token: owner.token });
    expect(await missing.json()).toMatchObject({ code: "NoSuchKey" });

    // upstream's detail for each rule it checks
    const details: Record<string, string> = {
      "max-snippet: -1":
        'X-Robots-Tag "max-snippet" value must be a non-negative number, got: "-1"',
      "max-image-preview: huge":
        'X-Robots-Tag "max-image-preview" value must be one of: none, standard, large, got: "huge"',
      "max-video-preview: -2":
        'X-Robots-Tag "max-video-preview" value must be a number >= -1, got: "-2"',
      "unavailable_after: someday":
        'X-Robots-Tag "unavailable_after" value must be a valid date, got: "someday"',
      "max-snippet:": 'X-Robots-Tag rule "max-snippet" requires a value',
      "googlebot:": 'X-Robots-Tag user agent "googlebot" has no rules specified',
      "noindex,,nofollow": "X-Robots-Tag header contains empty rule",
    };
    for (const [value, detail] of Object.entries(details)) {
      const response = await owner.client.storage
        .from("storage-private")
        .upload(path, "hello", { headers: { "x-robots-tag": value } });
      expect(response.error, value).toMatchObject({
        statusCode: "400",
        message: `Invalid X-Robots-Tag header: ${detail}`,
      });
    }

    // a signed upload URL checks it as well
    const sign = await owner.client.storage.from("storage-private").createSignedUploadUrl(path);
    const viaLink = await fetch(
      `${STORAGE_URL}/object/upload/sign/storage-private/${path}?token=${sign.data?.token}`,
      {
        method: "PUT",
        headers: { "content-type": "text/plain", "x-robots-tag": "nofollow, everything" },
        body: "hello",
      },
    );
    expect(viaLink.status).toBe(400);
    expect(await viaLink.json()).toMatchObject({
      error: "invalid_x_robots_tag",
      message: 'Invalid X-Robots-Tag header: Invalid X-Robots-Tag rule: "everything"',
    });
  });

  test("a user agent's rules and an unavailable_after date with commas are valid", async () => {
    const owner = await member();
    const bucket = owner.client.storage.from("storage-private");
    const values = [
      "googlebot: noindex, nofollow",
      "unavailable_after: Wed, 25 Jun 2025 10:00:00 GMT, noimageindex",
      "otherbot: max-image-preview: large, max-video-preview: -1",
    ];
    for (const [i, value] of values.entries()) {
      const path = `${owner.id}/agent-${i}.txt`;
      const uploaded = await bucket.upload(path, "hello", { headers: { "x-robots-tag": value } });
      expect(uploaded.error, value).toBeNull();
      const response = await storageFetch(`/object/storage-private/${path}`, {
        token: owner.token,
      });
      expect(response.headers.get("x-robots-tag")).toBe(value);
      await response.arrayBuffer();
    }
    // a signed upload URL takes it too
    const path = `${owner.id}/signed.txt`;
    const sign = await bucket.createSignedUploadUrl(path);
    const viaLink = await bucket.uploadToSignedUrl(path, sign.data?.token ?? "", "hello", {
      headers: { "x-robots-tag": "all" },
    });
    expect(viaLink.error).toBeNull();
    const response = await storageFetch(`/object/storage-private/${path}`, { token: owner.token });
    expect(response.headers.get("x-robots-tag")).toBe("all");
    await response.arrayBuffer();
  });
});
