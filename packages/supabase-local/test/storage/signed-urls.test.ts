// Signed URLs (singly and in batches), signed upload URLs and public URLs: made only for what the
// caller may read (or insert), used by anyone who holds one, signed with this install's own key:
// an expired, tampered or self-minted token (over the public JWT secret) is refused.
import { SignJWT } from "jose";
import { describe, expect, test } from "vitest";
import { KEYS } from "../../src/project/keys.ts";
import { anonClient, member, STORAGE_URL, storageFetch } from "./support.ts";

describe("signed URLs", () => {
  test("the owner signs one and a batch; anyone holding them downloads; others cannot sign", async () => {
    const owner = await member();
    const bucket = owner.client.storage.from("storage-private");
    await bucket.upload(`${owner.id}/a.txt`, "A");
    await bucket.upload(`${owner.id}/b.txt`, "B");

    const single = await bucket.createSignedUrl(`${owner.id}/a.txt`, 60, { download: "a.txt" });
    expect(single.error).toBeNull();
    const response = await fetch(single.data?.signedUrl ?? "");
    expect(response.status).toBe(200);
    expect(await response.text()).toBe("A");
    expect(response.headers.get("content-disposition")).toContain("filename=a.txt");
    // upstream sends Expires, not the object's Cache-Control, behind a signed URL
    expect(new Date(response.headers.get("expires") ?? "").getTime()).toBeGreaterThan(Date.now());

    const batch = await bucket.createSignedUrls(
      [`${owner.id}/a.txt`, `${owner.id}/b.txt`, `${owner.id}/missing.txt`],
      60,
    );
    expect(batch.data?.map((d) => d.error)).toEqual([
      null,
      null,
      "Either the object does not exist or you do not have access to it",
    ]);
    expect(await (await fetch(batch.data?.[1]?.signedUrl ?? "")).text()).toBe("B");

    const other = await member();
    const refused = await other.client.storage
      .from("storage-private")
      .createSignedUrl(`${owner.id}/a.txt`, 60);
    expect(refused.error).toMatchObject({ statusCode: "404", message: "Object not found" });
    const refusedBatch = await anonClient()
      .storage.from("storage-private")
      .createSignedUrls([`${owner.id}/a.txt`], 60);
    expect(refusedBatch.data?.[0]?.signedUrl).toBeNull();
  });

  test("expired, tampered, for another object, or minted with the JWT secret: refused", async () => {
    const owner = await member();
    const bucket = owner.client.storage.from("storage-private");
    await bucket.upload(`${owner.id}/secret.txt`, "S");
    await bucket.upload(`${owner.id}/other.txt`, "O");
    const { data } = await bucket.createSignedUrl(`${owner.id}/secret.txt`, 1);
    const url = new URL(data?.signedUrl ?? "");
    const token = url.searchParams.get("token") ?? "";

    // another object's path with this token
    const elsewhere = await fetch(
      `${STORAGE_URL}/object/sign/storage-private/${owner.id}/other.txt?token=${token}`,
    );
    expect(elsewhere.status).toBe(400);
    expect(await elsewhere.json()).toMatchObject({
      statusCode: "400",
      code: "InvalidSignature",
      message: "Invalid signature",
    });

    // a token for the other object, signed with the (public) JWT secret: never the signing key
    const minted = await new SignJWT({ url: `storage-private/${owner.id}/other.txt` })
      .setProtectedHeader({ alg: "HS256", typ: "JWT" })
      .setExpirationTime("1h")
      .sign(new TextEncoder().encode(KEYS.jwtSecret));
    const forged = await fetch(
      `${STORAGE_URL}/object/sign/storage-private/${owner.id}/other.txt?token=${minted}`,
    );
    expect(forged.status).toBe(400);
    expect(await forged.json()).toMatchObject({
      code: "InvalidJWT",
      message: "signature verification failed",
    });

    // a tampered payload (the URL changed, the signature kept)
    const [header, payload, signature] = token.split(".") as [string, string, string];
    const changed = Buffer.from(
      JSON.stringify({
        ...JSON.parse(Buffer.from(payload, "base64url").toString()),
        url: `storage-private/${owner.id}/other.txt`,
      }),
    ).toString("base64url");
    const tampered = await fetch(
      `${STORAGE_URL}/object/sign/storage-private/${owner.id}/other.txt?token=${header}.${changed}.${signature}`,
    );
    expect((await tampered.json()).message).toBe("signature verification failed");

    // expired: a second's URL, once its exp has passed
    const exp = JSON.parse(Buffer.from(payload, "base64url").toString()).exp as number;
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, exp * 1000 - Date.now() + 50)));
    const expired = await fetch(url);
    expect(expired.status).toBe(400);
    expect(await expired.json()).toMatchObject({
      code: "InvalidJWT",
      message: '"exp" claim timestamp check failed',
    });
  });

  test("signing bodies as upstream's schemas: expiresIn an integer of at least 1 (coerced as Fastify does), 1 to 1000 paths", async () => {
    const owner = await member();
    const path = `${owner.id}/x.txt`;
    await owner.client.storage.from("storage-private").upload(path, "x");
    const sign = (body: Record<string, unknown>, batch = false) =>
      storageFetch(
        batch ? "/object/sign/storage-private" : `/object/sign/storage-private/${path}`,
        {
          method: "POST",
          token: owner.token,
          headers: { "content-type": "application/json" },
          body: JSON.stringify(body),
        },
      );
    const schemaError = (message: string) => ({
      statusCode: "400",
      error: "FastifyError",
      code: "InternalError",
      message,
    });

    // Fastify's Ajv coerces a numeric string: a minute's URL
    const single = await sign({ expiresIn: "60" });
    expect(single.status).toBe(200);
    const token = new URL(`http://x${(await single.json()).signedURL}`).searchParams.get("token");
    const claims = JSON.parse(Buffer.from(token?.split(".")[1] ?? "", "base64url").toString());
    expect(claims.exp - claims.iat).toBe(60);
    const batch = await sign({ expiresIn: "60", paths: [path] }, true);
    expect((await batch.json())[0]).toMatchObject({ path, error: null });

    for (const batched of [false, true]) {
      const paths = batched ? { paths: [path] } : {};
      for (const [expiresIn, message] of [
        [1.5, "body/expiresIn must be integer"],
        ["1.5", "body/expiresIn must be integer"],
        [0, "body/expiresIn must be >= 1"],
        ["Infinity", 'body/expiresIn must pass "finite" keyword validation'],
      ] as const) {
        const refused = await sign({ expiresIn, ...paths }, batched);
        expect([batched, expiresIn, refused.status]).toEqual([batched, expiresIn, 400]);
        expect(await refused.json()).toEqual(schemaError(message));
      }
      // an integer past what an exp can be: the handler's InvalidParameter
      const far = await sign({ expiresIn: 1e15, ...paths }, batched);
      expect(await far.json()).toMatchObject({
        statusCode: "400",
        code: "InvalidParameter",
        message: "Invalid Parameter expiresIn",
      });
    }

    // storage-js sends a number as it is given
    const { error } = await owner.client.storage.from("storage-private").createSignedUrl(path, 0);
    expect(error).toMatchObject({ statusCode: "400", message: "body/expiresIn must be >= 1" });

    for (const [body, message] of [
      [{ expiresIn: 60 }, "body must have required property 'paths'"],
      [{ paths: [path] }, "body must have required property 'expiresIn'"],
      [{ expiresIn: 60, paths: [] }, "body/paths must NOT have fewer than 1 items"],
      [
        { expiresIn: 60, paths: Array.from({ length: 1001 }, (_, i) => `${i}.txt`) },
        "body/paths must NOT have more than 1000 items",
      ],
      [{ expiresIn: 60, paths: [path, {}] }, "body/paths/1 must be string"],
    ] as const) {
      const refused = await sign(body, true);
      expect(refused.status).toBe(400);
      expect(await refused.json()).toEqual(schemaError(message));
    }
    const most = await sign(
      { expiresIn: 60, paths: Array.from({ length: 1000 }, (_, i) => `${i}.txt`) },
      true,
    );
    expect(await most.json()).toHaveLength(1000);
  });
});

describe("signed upload URLs", () => {
  test("need insert rights to make; anyone holding one uploads once, as the owner who made it", async () => {
    const owner = await member();
    const path = `${owner.id}/dropped-in.txt`;
    const made = await owner.client.storage.from("storage-private").createSignedUploadUrl(path);
    expect(made.error).toBeNull();
    const anon = anonClient().storage.from("storage-private");
    const uploaded = await anon.uploadToSignedUrl(path, made.data?.token ?? "", "via link");
    expect(uploaded.error).toBeNull();
    expect(uploaded.data?.fullPath).toBe(`storage-private/${path}`);
    const downloaded = await owner.client.storage.from("storage-private").download(path);
    expect(await downloaded.data?.text()).toBe("via link");
    // not an upsert: the same URL cannot replace it
    const again = await anon.uploadToSignedUrl(path, made.data?.token ?? "", "again");
    expect(again.error).toMatchObject({ statusCode: "409" });

    // another user cannot make one for the owner's folder; nor can anon
    const other = await member();
    const refused = await other.client.storage
      .from("storage-private")
      .createSignedUploadUrl(`${owner.id}/intruder.txt`);
    expect(refused.error?.message).toBe("new row violates row-level security policy");
    // a token for one path does not upload another
    const wrongPath = await anon.uploadToSignedUrl(
      `${owner.id}/elsewhere.txt`,
      made.data?.token ?? "",
      "x",
    );
    expect(wrongPath.error?.message).toBe("Invalid signature");
  });

  test("a download token does not upload, and an upload token does not download (their scope)", async () => {
    const owner = await member();
    const bucket = owner.client.storage.from("storage-private");
    const secret = `${owner.id}/secret.txt`;
    await bucket.upload(secret, "top secret");
    // an upload URL for the same path (upsert: it may replace the object)
    const upload = await bucket.createSignedUploadUrl(secret, { upsert: true });
    const download = await bucket.createSignedUrl(secret, 60);
    const uploadToken = upload.data?.token ?? "";
    const downloadToken = new URL(download.data?.signedUrl ?? "").searchParams.get("token") ?? "";
    const refused = (scope: string) => ({
      statusCode: "400",
      code: "InvalidSignature",
      error: "InvalidSignature",
      message: `Token is not scoped for ${scope}`,
    });

    const read = await fetch(
      `${STORAGE_URL}/object/sign/storage-private/${secret}?token=${uploadToken}`,
    );
    expect(read.status).toBe(400);
    expect(await read.json()).toEqual(refused("download"));

    const anon = anonClient().storage.from("storage-private");
    const planted = await anon.uploadToSignedUrl(secret, downloadToken, "replaced");
    expect(planted.error?.message).toBe("Token is not scoped for upload");
    const resumable = await fetch(`${STORAGE_URL}/upload/resumable/sign`, {
      method: "POST",
      headers: {
        "tus-resumable": "1.0.0",
        "upload-length": "8",
        "x-signature": downloadToken,
        "upload-metadata": `bucketName ${btoa("storage-private")},objectName ${btoa(secret)}`,
      },
    });
    // TUS answers its errors as text
    expect(resumable.status).toBe(400);
    expect(await resumable.text()).toBe("Token is not scoped for upload");
    expect(await (await bucket.download(secret)).data?.text()).toBe("top secret");
  });
});
