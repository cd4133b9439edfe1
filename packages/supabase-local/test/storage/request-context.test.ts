// What a policy sees of the request, as on upstream's Storage: every transaction a request makes
// carries its headers (request.headers, JSON with lower-case names), its method and path
// (request.method; request.path as the server behind the gateway sees it: no /storage/v1, the
// query kept) and its route's operation (storage.operation(): upstream's name for that route, so
// an authenticated download, a list v2, a batch of signed URLs and a resumable upload's creation
// are each told apart). The policies are test/fixtures/storage.sql's, on storage-context.
import { randomUUID } from "node:crypto";
import { describe, expect, test } from "vitest";
import { adminClient, member, PUBLISHABLE_KEY, STORAGE_URL, storageFetch } from "./support.ts";

const BUCKET = "storage-context";

/** An object the service role puts in `folder` (no policy asks it), returning its name. */
async function seeded(folder: string, text = "seeded"): Promise<string> {
  const name = `${folder}/${randomUUID()}.txt`;
  const { error } = await adminClient()
    .storage.from(BUCKET)
    .upload(name, new Blob([text], { type: "text/plain" }));
  expect(error).toBeNull();
  return name;
}

/** A plain upload (POST /object) as `token`, with `headers` besides. */
function upload(token: string, name: string, headers: Record<string, string> = {}) {
  return storageFetch(`/object/${BUCKET}/${name}`, {
    method: "POST",
    token,
    headers: { "content-type": "text/plain", ...headers },
    body: "uploaded",
  });
}

/** The JSON of a POST to `path` as `token`. */
async function postJson(path: string, token: string, body: unknown) {
  const response = await storageFetch(path, {
    method: "POST",
    token,
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  return { status: response.status, body: await response.json() };
}

const RLS_REFUSAL = {
  statusCode: "403",
  error: "Unauthorized",
  message: "new row violates row-level security policy",
};

describe("the request as policies see it", () => {
  test("request.headers: a policy keyed on a header lets in the upload that sends it, and only that one", async () => {
    const user = await member();
    // sent in mixed case: upstream's policies read the names in lower case
    const opened = await upload(user.token, `header/${user.id}/in.txt`, {
      "X-Upload-Pass": "open sesame",
    });
    expect(opened.status).toBe(200);
    for (const headers of [{}, { "x-upload-pass": "wrong" }] as Record<string, string>[]) {
      const refused = await upload(user.token, `header/${user.id}/out.txt`, headers);
      expect(refused.status).toBe(400);
      expect(await refused.json()).toMatchObject(RLS_REFUSAL);
    }
    const { data } = await adminClient().storage.from(BUCKET).exists(`header/${user.id}/in.txt`);
    expect(data).toBe(true);
  });

  test("request.method and request.path: as upstream behind the gateway, without /storage/v1 and with the query", async () => {
    const user = await member();
    const name = await seeded("exact", "exact");
    const read = (path: string) => storageFetch(path, { token: user.token });
    const allowed = await read(`/object/authenticated/${BUCKET}/${name}?download=report.txt`);
    expect(allowed.status).toBe(200);
    expect(await allowed.text()).toBe("exact");
    // another query, or the same object by another route, is another path
    expect((await read(`/object/authenticated/${BUCKET}/${name}`)).status).toBe(400);
    expect((await read(`/object/${BUCKET}/${name}?download=report.txt`)).status).toBe(400);
  });

  test("storage.operation(): an authenticated download is storage.object.get_authenticated, its info and HEAD are not", async () => {
    const user = await member();
    const name = await seeded("download", "downloaded");
    const read = (path: string, method = "GET") =>
      storageFetch(path, { method, token: user.token });
    const downloaded = await read(`/object/authenticated/${BUCKET}/${name}`);
    expect(downloaded.status).toBe(200);
    expect(await downloaded.text()).toBe("downloaded");
    // the legacy route is the same operation upstream
    expect((await read(`/object/${BUCKET}/${name}`)).status).toBe(200);
    // object.get_authenticated_info and object.head_authenticated_info
    const info = await read(`/object/info/authenticated/${BUCKET}/${name}`);
    expect([info.status, (await info.json()).message]).toEqual([400, "Object not found"]);
    expect((await read(`/object/authenticated/${BUCKET}/${name}`, "HEAD")).status).toBe(400);
  });

  test("storage.operation(): list v2 is storage.object.list_v2, list is not", async () => {
    const user = await member();
    const name = await seeded(`listed/${randomUUID()}`);
    const prefix = name.slice(0, name.lastIndexOf("/") + 1);
    const v2 = await postJson(`/object/list-v2/${BUCKET}`, user.token, { prefix });
    expect(v2.status).toBe(200);
    expect(v2.body.objects.map((o: { name: string }) => o.name)).toEqual([name]);
    const v1 = await postJson(`/object/list/${BUCKET}`, user.token, { prefix });
    expect(v1).toEqual({ status: 200, body: [] });
  });

  test("storage.operation(): a batch of signed URLs is storage.object.sign_many, a single one is not", async () => {
    const user = await member();
    const name = await seeded("signed", "signed");
    const batch = await postJson(`/object/sign/${BUCKET}`, user.token, {
      expiresIn: 60,
      paths: [name],
    });
    expect(batch.status).toBe(200);
    expect(batch.body).toEqual([
      { error: null, path: name, signedURL: expect.stringContaining(`/object/sign/${BUCKET}/`) },
    ]);
    const signed = await fetch(`${STORAGE_URL}${batch.body[0].signedURL}`);
    expect(await signed.text()).toBe("signed");
    const single = await postJson(`/object/sign/${BUCKET}/${name}`, user.token, {
      expiresIn: 60,
    });
    expect(single).toMatchObject({ status: 400, body: { message: "Object not found" } });
  });

  test("storage.operation(): a resumable upload is storage.tus.upload.create then .part, a plain upload is not", async () => {
    const user = await member();
    const name = `tus/${user.id}/resumed.txt`;
    const headers = {
      apikey: PUBLISHABLE_KEY,
      authorization: `Bearer ${user.token}`,
      "tus-resumable": "1.0.0",
    };
    const created = await fetch(`${STORAGE_URL}/upload/resumable`, {
      method: "POST",
      headers: {
        ...headers,
        "upload-length": "7",
        "upload-metadata": [
          `bucketName ${Buffer.from(BUCKET).toString("base64")}`,
          `objectName ${Buffer.from(name).toString("base64")}`,
          `contentType ${Buffer.from("text/plain").toString("base64")}`,
        ].join(","),
      },
    });
    expect(created.status).toBe(201);
    const patched = await fetch(created.headers.get("location") ?? "", {
      method: "PATCH",
      headers: {
        ...headers,
        "upload-offset": "0",
        "content-type": "application/offset+octet-stream",
      },
      body: "resumed",
    });
    expect(patched.status).toBe(204);
    const { data } = await adminClient().storage.from(BUCKET).download(name);
    expect(await data?.text()).toBe("resumed");

    const plain = await upload(user.token, `tus/${user.id}/plain.txt`);
    expect(plain.status).toBe(400);
    expect(await plain.json()).toMatchObject(RLS_REFUSAL);
  });
});
