// readFormData(): a form post's body is read up to a limit, whether or not it declares its length.
import { describe, expect, it } from "vitest";
import { readFormData } from "../../../app/lib/forms.server";

const URLENCODED = { "Content-Type": "application/x-www-form-urlencoded" };

/** A POST whose body comes in `chunks` without a Content-Length (as a chunked upload does). */
function chunked(chunks: string[], headers: Record<string, string> = URLENCODED): Request {
  const encoder = new TextEncoder();
  const body = new ReadableStream<Uint8Array>({
    start(controller) {
      for (const chunk of chunks) controller.enqueue(encoder.encode(chunk));
      controller.close();
    },
  });
  return new Request("https://app.example/x", {
    method: "POST",
    headers,
    body,
    duplex: "half",
  } as RequestInit);
}

describe("readFormData", () => {
  it("reads a form within the limit, declared or not", async () => {
    const declared = new Request("https://app.example/x", {
      method: "POST",
      headers: URLENCODED,
      body: "a=1&b=two",
    });
    const form = await readFormData(declared, 64);
    expect(form instanceof FormData && form.get("b")).toBe("two");
    const streamed = await readFormData(chunked(["a=1&", "b=two"]), 9);
    expect(streamed instanceof FormData && streamed.get("b")).toBe("two");
  });

  it("a body that declares more than the limit is not read", async () => {
    const body = new ReadableStream<Uint8Array>({
      pull() {
        throw new Error("read");
      },
    });
    const request = new Request("https://app.example/x", {
      method: "POST",
      headers: { ...URLENCODED, "Content-Length": "65" },
      body,
      duplex: "half",
    } as RequestInit);
    expect(await readFormData(request, 64)).toBe("too_big");
  });

  it("a body without a length is cut off once past the limit", async () => {
    let pulled = 0;
    const endless = new ReadableStream<Uint8Array>({
      pull(controller) {
        pulled += 1;
        controller.enqueue(new TextEncoder().encode("a".repeat(16)));
      },
    });
    const request = new Request("https://app.example/x", {
      method: "POST",
      headers: URLENCODED,
      body: endless,
      duplex: "half",
    } as RequestInit);
    expect(await readFormData(request, 64)).toBe("too_big");
    expect(pulled).toBeLessThan(10);
    expect(await readFormData(chunked(["a=12345678", "9"]), 10)).toBe("too_big");
  });

  it("a body that is not a form is unreadable, not too big", async () => {
    expect(await readFormData(chunked(["{}"], { "Content-Type": "application/json" }), 64)).toBe(
      "unreadable",
    );
    const multipart = { "Content-Type": "multipart/form-data; boundary=b" };
    expect(await readFormData(chunked(["--b\r\nnot a part"], multipart), 64)).toBe("unreadable");
    // no body at all: an empty form, as request.formData() gives
    const none = new Request("https://app.example/x", { method: "POST", headers: URLENCODED });
    const empty = await readFormData(none, 64);
    expect(empty instanceof FormData && [...empty]).toEqual([]);
  });
});
