// /storage/v1 behind the same rules as every API (the gateway's key check, the Host allow-list,
// CORS for the project's origins only), the answers of a server without the parts left out (S3,
// CDN purge, lifecycle, analytics and vector buckets), and bad input answered 4xx, never 500.
import { request } from "node:http";
import { beforeAll, describe, expect, test } from "vitest";
import { adminClient, type Member, member, STORAGE_URL, storageFetch } from "./support.ts";

describe("the gateway's rules apply to /storage/v1", () => {
  test("no key: the hosted 401; a foreign Host: 403; CORS only for the project's origins", async () => {
    const noKey = await fetch(`${STORAGE_URL}/bucket`);
    expect(noKey.status).toBe(401);
    expect((await noKey.json()).message).toBe("No API key found in request");
    const rebinding = await new Promise<number | undefined>((resolve, reject) => {
      const url = new URL(`${STORAGE_URL}/object/public/storage-public/a.txt`);
      request(url, { headers: { host: `attacker.example:${url.port}` } }, (res) => {
        res.resume();
        resolve(res.statusCode);
      })
        .on("error", reject)
        .end();
    });
    expect(rebinding).toBe(403);
    const foreign = await storageFetch("/bucket", { headers: { origin: "https://evil.example" } });
    expect(foreign.headers.get("access-control-allow-origin")).toBeNull();
    await foreign.arrayBuffer();
    // public objects and signed URLs need no key, as on the hosted service
    const open = await fetch(`${STORAGE_URL}/object/public/storage-public/nothing.txt`);
    expect(open.status).toBe(400);
    expect((await open.json()).code).toBe("NoSuchKey");
  });
});

describe("left out, answered as a server without them", () => {
  test.each([
    ["DELETE", "/cdn/storage-public/a.txt"],
    ["GET", "/bucket/storage-public/lifecycle"],
    ["GET", "/iceberg/bucket"],
    ["POST", "/vector/CreateVectorBuckets"],
  ])("%s %s: 404 route not found", async (method, path) => {
    const response = await storageFetch(path, { method });
    expect(response.status).toBe(404);
    expect(await response.json()).toEqual({
      statusCode: 404,
      error: "Not Found",
      message: `Route ${method}:${path} not found`,
    });
  });
});

describe("bad input is a 4xx, never a 500", () => {
  let user: Member;
  beforeAll(async () => {
    user = await member();
  });

  test.each([
    ["POST", "/object/list/storage-private", "{", "Body is not valid JSON"],
    ["POST", "/object/list/storage-private", "[]", "body must be object"],
    ["POST", "/object/list/storage-private", '{"prefix":1}', "body/prefix must be string"],
    ["POST", "/object/list/storage-private", '{"prefix":"","limit":-1}', "body/limit must be >= 1"],
    ["POST", "/object/list-v2/storage-private", '{"limit":1.5}', "body/limit must be integer"],
    [
      "POST",
      "/object/sign/storage-private",
      '{"expiresIn":60,"paths":{}}',
      "body/paths must be array",
    ],
    [
      "POST",
      "/object/move",
      '{"bucketId":"storage-private"}',
      "body must have required property 'sourceKey'",
    ],
    [
      "DELETE",
      "/object/storage-private",
      '{"prefixes":[]}',
      "body/prefixes must NOT have fewer than 1 items",
    ],
    ["PUT", "/bucket/storage-private", "{}", "No content provided"],
    ["GET", "/bucket?limit=1e40", undefined, undefined],
  ])("%s %s %s", async (method, path, body, message) => {
    const response = await storageFetch(path, {
      method,
      token: user.token,
      headers: { "content-type": "application/json" },
      body,
    });
    expect(response.status).toBeLessThan(500);
    if (message) {
      expect(response.status).toBe(400);
      expect((await response.json()).message).toContain(message);
    } else await response.arrayBuffer();
  });

  test("a NUL in a body's string, a bucket id or x-metadata: 400 InvalidParameter (Postgres cannot store it)", async () => {
    const metadata = Buffer.from('{"a":"\\u0000"}').toString("base64");
    const cases: Array<[string, string, string?, Record<string, string>?]> = [
      ["POST", "/object/list/storage-private", '{"prefix":"a\\u0000"}'],
      ["POST", "/object/list-v2/storage-private", '{"prefix":"a\\u0000"}'],
      ["POST", "/object/move", '{"bucketId":"a\\u0000","sourceKey":"a","destinationKey":"b"}'],
      ["POST", "/object/sign/storage-private", '{"expiresIn":60,"paths":["a\\u0000"]}'],
      ["DELETE", "/object/storage-private", '{"prefixes":["a\\u0000"]}'],
      ["GET", "/bucket/a%00b"],
      [
        "POST",
        `/object/storage-private/${user.id}/nul-metadata.txt`,
        "x",
        { "x-metadata": metadata },
      ],
    ];
    for (const [method, path, body, headers] of cases) {
      const response = await storageFetch(path, {
        method,
        token: user.token,
        headers: { "content-type": "application/json", ...headers },
        body,
      });
      expect([path, response.status]).toEqual([path, 400]);
      expect(await response.json()).toMatchObject({ statusCode: "400", code: "InvalidParameter" });
    }
  });

  test("a multipart form cut off inside its file part: 400 No content provided, and the backend lives on", async () => {
    const path = `/object/storage-private/${user.id}/cut-form.txt`;
    const cut = await storageFetch(path, {
      method: "POST",
      token: user.token,
      headers: { "content-type": "multipart/form-data; boundary=XX" },
      body: '--XX\r\nContent-Disposition: form-data; name="file"; filename="a"\r\n\r\nno end',
    });
    expect(await cut.json()).toMatchObject({ statusCode: "400", message: "No content provided" });
    const info = await storageFetch(`/object/info${path.slice("/object".length)}`, {
      token: user.token,
    });
    expect(await info.json()).toMatchObject({ code: "NoSuchKey" });
  });

  test("a form's metadata nested thousands deep: 400 InvalidParameter, and the database answers on", async () => {
    for (const depth of [3_000, 100_000]) {
      const metadata = `${'{"a":'.repeat(depth)}1${"}".repeat(depth)}`;
      const response = await storageFetch(`/object/storage-private/${user.id}/deep-${depth}.txt`, {
        method: "POST",
        token: user.token,
        headers: { "content-type": "multipart/form-data; boundary=XX" },
        body:
          `--XX\r\nContent-Disposition: form-data; name="metadata"\r\n\r\n${metadata}\r\n` +
          '--XX\r\nContent-Disposition: form-data; name="file"; filename="a"\r\n\r\nA\r\n--XX--\r\n',
      });
      expect(await response.json()).toMatchObject({ statusCode: "400", code: "InvalidParameter" });
    }
    const { data } = await user.client.storage.from("storage-private").list(user.id);
    expect(data?.map((o) => o.name).filter((name) => name.startsWith("deep-"))).toEqual([]);
  });

  test("a key past S3's 1024 bytes, a copy or move into a bucket that does not exist", async () => {
    const long = await user.client.storage
      .from("storage-private")
      .upload(`${user.id}/${"a".repeat(1100)}`, "x");
    expect(long.error).toMatchObject({ statusCode: "400" });
    await user.client.storage.from("storage-private").upload(`${user.id}/src.txt`, "x");
    // the user's policy refuses another bucket first, as Postgres checks RLS before the key
    const copy = await user.client.storage
      .from("storage-private")
      .copy(`${user.id}/src.txt`, `${user.id}/dst.txt`, { destinationBucket: "no-such-bucket" });
    expect(copy.error).toMatchObject({ statusCode: "403" });
    const service = adminClient().storage.from("storage-private");
    const serviceCopy = await service.copy(`${user.id}/src.txt`, "dst.txt", {
      destinationBucket: "no-such-bucket",
    });
    expect(serviceCopy.error).toMatchObject({
      statusCode: "404",
      message: "The related resource does not exist",
    });
    const move = await service.move(`${user.id}/src.txt`, "x.txt", {
      destinationBucket: "no-such-bucket",
    });
    expect(move.error).toMatchObject({ statusCode: "404" });
  });
});
