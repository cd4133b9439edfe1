// SigV4 as the S3 endpoint checks it, against the examples AWS publishes with their signatures
// (Amazon S3 API reference: "Signature Calculations for the Authorization Header" and
// "Transferring Payload in Multiple Chunks"): a pass means the same signatures as S3's, not merely
// agreement with ourselves.
import { describe, expect, test } from "vitest";
import { decodeChunked } from "../../src/storage/s3/chunked-body.ts";
import {
  chunkSignature,
  clientSignature,
  verifySignature,
} from "../../src/storage/s3/signature.ts";

const EXAMPLE = {
  accessKey: "AKIAIOSFODNN7EXAMPLE",
  secretKey: "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
  region: "us-east-1",
};

function authorization(signedHeaders: string, signature: string): string {
  return `AWS4-HMAC-SHA256 Credential=AKIAIOSFODNN7EXAMPLE/20130524/us-east-1/s3/aws4_request,SignedHeaders=${signedHeaders},Signature=${signature}`;
}

/** AWS's GET Object example: the first 10 bytes of test.txt. */
function getExample(signature: string, range = "bytes=0-9"): Request {
  return new Request("http://examplebucket.s3.amazonaws.com/test.txt", {
    headers: {
      host: "examplebucket.s3.amazonaws.com",
      range,
      "x-amz-content-sha256": "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855",
      "x-amz-date": "20130524T000000Z",
      authorization: authorization("host;range;x-amz-content-sha256;x-amz-date", signature),
    },
  });
}

const GET_SIGNATURE = "f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41";

// The streaming PUT example: 66,560 bytes of "a" in a chunk of 65,536, one of 1,024 and the last.
const SEED = "4f232c4386841ef735655705268965c44a0e4690baa4adea153f7db9fa80a0a9";
const CHUNKS: Array<[number, string]> = [
  [65536, "ad80c730a21e5b8d04586a2213dd63b9a0e99e0e2307b0ade35a65485a288648"],
  [1024, "0055627c9e194cb4542bae2aa5492e3c1575bbb81b612b7d234b86a503ef5497"],
  [0, "b6c6ea8a5354eaf15b3cb7646744f4275b71ea724fed81ceb9323e279d449df9"],
];

function putExample(): Request {
  return new Request("http://s3.amazonaws.com/examplebucket/chunkObject.txt", {
    method: "PUT",
    headers: {
      host: "s3.amazonaws.com",
      "content-encoding": "aws-chunked",
      "content-length": "66824",
      "x-amz-content-sha256": "STREAMING-AWS4-HMAC-SHA256-PAYLOAD",
      "x-amz-date": "20130524T000000Z",
      "x-amz-decoded-content-length": "66560",
      "x-amz-storage-class": "REDUCED_REDUNDANCY",
      authorization: authorization(
        "content-encoding;content-length;host;x-amz-content-sha256;x-amz-date;x-amz-decoded-content-length;x-amz-storage-class",
        SEED,
      ),
    },
  });
}

function chunkedBody(chunks: Array<[number, string]>, corrupt = false): Uint8Array[] {
  return chunks.map(([size, signature], i) => {
    const data = Buffer.alloc(size, "a");
    if (corrupt && i === 1) data[10] = "b".charCodeAt(0);
    return Buffer.concat([
      Buffer.from(`${size.toString(16)};chunk-signature=${signature}\r\n`),
      data,
      Buffer.from("\r\n"),
    ]);
  });
}

async function decoded(pieces: Uint8Array[], algorithm = "STREAMING-AWS4-HMAC-SHA256-PAYLOAD") {
  const client = clientSignature(putExample(), new URL(putExample().url));
  const out: Uint8Array[] = [];
  for await (const piece of decodeChunked(split(pieces), algorithm, {
    seed: client.signature,
    sign: (previous, hash) => chunkSignature(client, EXAMPLE.secretKey, previous, hash),
  }))
    out.push(piece);
  return Buffer.concat(out);
}

/** The body as a client's socket delivers it: in pieces that cut across chunk boundaries. */
async function* split(pieces: Uint8Array[]): AsyncGenerator<Uint8Array> {
  const whole = Buffer.concat(pieces);
  for (let at = 0; at < whole.length; at += 7001) yield whole.subarray(at, at + 7001);
}

describe("SigV4", () => {
  test("AWS's GET example verifies with its published signature, and nothing else does", () => {
    const request = getExample(GET_SIGNATURE);
    const url = new URL(request.url);
    expect(verifySignature(clientSignature(request, url), request, url, EXAMPLE)).toBe(true);
    // one signed header changed, or another secret: not the same signature
    const changed = getExample(GET_SIGNATURE, "bytes=0-10");
    expect(verifySignature(clientSignature(changed, url), changed, url, EXAMPLE)).toBe(false);
    expect(
      verifySignature(clientSignature(request, url), request, url, {
        ...EXAMPLE,
        secretKey: "another",
      }),
    ).toBe(false);
  });

  test("another access key or service is refused before any signature is made", () => {
    const request = getExample(GET_SIGNATURE);
    const url = new URL(request.url);
    const client = clientSignature(request, url);
    expect(() => verifySignature(client, request, url, { ...EXAMPLE, accessKey: "x" })).toThrow(
      "Invalid Access Key",
    );
    const sqs = new Request(request, {
      headers: {
        ...Object.fromEntries(request.headers),
        authorization: authorization("host", GET_SIGNATURE).replace("/s3/", "/sqs/"),
      },
    });
    expect(() => verifySignature(clientSignature(sqs, url), sqs, url, EXAMPLE)).toThrow(
      "Invalid Service",
    );
  });

  test("a request without a signature, or with one cut short, is refused in upstream's words", () => {
    const url = new URL("http://localhost/storage/v1/s3/b");
    expect(() => clientSignature(new Request(url), url)).toThrow("Missing signature");
    const cut = new Request(url, {
      headers: { authorization: "AWS4-HMAC-SHA256 Credential=a/b/c", "x-amz-date": "x" },
    });
    expect(() => clientSignature(cut, url)).toThrow("Invalid signature format");
    const credential = new Request(url, {
      headers: {
        authorization: "AWS4-HMAC-SHA256 Credential=a/b/c,SignedHeaders=host,Signature=00",
        "x-amz-date": "x",
      },
    });
    expect(() => clientSignature(credential, url)).toThrow("Invalid credentials");
  });

  test("a presigned URL past its X-Amz-Expires is refused as expired", () => {
    const url = new URL(
      "http://localhost/storage/v1/s3/b/k?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AKIAIOSFODNN7EXAMPLE%2F20130524%2Fus-east-1%2Fs3%2Faws4_request&X-Amz-Date=20130524T000000Z&X-Amz-Expires=86400&X-Amz-SignedHeaders=host&X-Amz-Signature=00",
    );
    expect(() => clientSignature(new Request(url), url)).toThrow("The provided token has expired.");
  });
});

describe("aws-chunked bodies", () => {
  test("AWS's streaming example: its seed verifies and each chunk's signature chains from it", async () => {
    const request = putExample();
    const url = new URL(request.url);
    expect(verifySignature(clientSignature(request, url), request, url, EXAMPLE)).toBe(true);
    const bytes = await decoded(chunkedBody(CHUNKS));
    expect(bytes.length).toBe(66560);
    expect(bytes.every((b) => b === 97)).toBe(true);
  });

  test("a changed byte, a chunk's signature out of order or a missing one fails the body", async () => {
    await expect(decoded(chunkedBody(CHUNKS, true))).rejects.toThrow(
      "does not match the signature you provided",
    );
    const swapped: Array<[number, string]> = [
      [65536, CHUNKS[1]?.[1] as string],
      [1024, CHUNKS[0]?.[1] as string],
      [0, CHUNKS[2]?.[1] as string],
    ];
    await expect(decoded(chunkedBody(swapped))).rejects.toThrow("does not match");
    const unsigned = [Buffer.from("5\r\nhello\r\n0\r\n\r\n")];
    await expect(decoded(unsigned)).rejects.toThrow("Missing chunk signature");
  });

  test("framing a client could get wrong is a clear 400 or 413, never bytes taken as given", async () => {
    const unsignedTrailer = "STREAMING-UNSIGNED-PAYLOAD-TRAILER";
    const body = (text: string) => decoded([Buffer.from(text)], unsignedTrailer);
    expect(
      (await body("5\r\nhello\r\n0\r\nx-amz-checksum-crc32:NhCmhg==\r\n\r\n")).toString(),
    ).toBe("hello");
    await expect(body("5\r\nhello\r\n")).rejects.toThrow("Missing final chunk");
    await expect(body("5\r\nhel")).rejects.toThrow("Unexpected end of chunk data");
    await expect(body("5\r\nhelloXX0\r\n\r\n")).rejects.toThrow("Missing CRLF after chunk data");
    await expect(body("zz\r\n")).rejects.toThrow("Invalid chunk size");
    await expect(body(`${"f".repeat(300)}\r\n`)).rejects.toMatchObject({
      code: "EntityTooLarge",
    });
    await expect(body("1000000\r\n")).rejects.toMatchObject({ code: "EntityTooLarge" });
    await expect(body("0\r\n\r\nmore")).rejects.toThrow("Unexpected data after final chunk");
    await expect(body("0\r\nx-amz-checksum-crc32:AAAA\r\n")).rejects.toThrow("Incomplete trailer");
    await expect(decoded([Buffer.from("0\r\n\r\n")], "STREAMING-OTHER")).rejects.toThrow(
      "Invalid streaming algorithm",
    );
  });
});
