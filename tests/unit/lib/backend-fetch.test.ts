import { describe, expect, it } from "vitest";
import { createBackendFetch } from "../../../app/lib/backend-fetch.server";

/** A network that answers each request when the test says so (or fails it). */
function network() {
  const waiting: { url: string; answer: () => void; fail: () => void }[] = [];
  const fetch = ((input: RequestInfo | URL, init?: RequestInit) =>
    new Promise<Response>((resolve, reject) => {
      init?.signal?.addEventListener("abort", () => reject(init.signal?.reason));
      waiting.push({
        url: String(input),
        answer: () => resolve(new Response("[]")),
        fail: () => reject(new TypeError("network down")),
      });
    })) as typeof globalThis.fetch;
  const settle = async (url: string, how: "answer" | "fail" = "answer") => {
    const index = waiting.findIndex((request) => request.url.endsWith(url));
    const [request] = waiting.splice(index, 1);
    request?.[how]();
    await new Promise((resolve) => setTimeout(resolve, 0));
  };
  return { fetch, settle };
}

describe("backend fetch: the chain of sequential round trips", () => {
  it("counts requests in flight together as one trip, and one started after an answer as the next", async () => {
    const net = network();
    const backend = createBackendFetch({ fetch: net.fetch });
    expect(backend.sequential).toBe(0);
    const list = backend.fetch("http://db.test/rest/v1/notes");
    const tags = backend.fetch("http://db.test/rest/v1/tags");
    expect(backend.sequential).toBe(1);
    await net.settle("/notes");
    await list;
    // started after the list answered, while the tags are still out: the chain is now two long
    const shares = backend.fetch("http://db.test/rest/v1/rpc/list_note_shares");
    expect(backend.sequential).toBe(2);
    await net.settle("/tags");
    await net.settle("/list_note_shares");
    await Promise.all([tags, shares]);
    expect(backend.sequential).toBe(2);
    expect(backend.calls).toEqual([
      "/rest/v1/notes",
      "/rest/v1/tags",
      "/rest/v1/rpc/list_note_shares",
    ]);
  });

  it("a request started beside the second of a chain does not lengthen it", async () => {
    const net = network();
    const backend = createBackendFetch({ fetch: net.fetch });
    const first = backend.fetch("http://db.test/auth/v1/user");
    await net.settle("/user");
    await first;
    const a = backend.fetch("http://db.test/rest/v1/a");
    const b = backend.fetch("http://db.test/rest/v1/b");
    await net.settle("/a");
    await net.settle("/b");
    await Promise.all([a, b]);
    expect(backend.sequential).toBe(2);
  });

  it("a failed request counts as answered: what follows it is one trip later", async () => {
    const net = network();
    const backend = createBackendFetch({ fetch: net.fetch });
    const failed = backend.fetch("http://db.test/rest/v1/a", { method: "POST" });
    await net.settle("/a", "fail");
    await expect(failed).rejects.toThrow("network down");
    const next = backend.fetch("http://db.test/rest/v1/b");
    await net.settle("/b");
    await next;
    expect(backend.sequential).toBe(2);
  });
});

describe("backend fetch: a read whose connection failed is sent once more", () => {
  it("a GET that fails without an answer is sent again, and its answer is the answer", async () => {
    const net = network();
    const backend = createBackendFetch({ fetch: net.fetch });
    const user = backend.fetch("http://db.test/auth/v1/user");
    await net.settle("/user", "fail");
    await net.settle("/user");
    expect((await user).ok).toBe(true);
    // both tries are round trips, and the page waited for them one after the other
    expect(backend.calls).toEqual(["/auth/v1/user", "/auth/v1/user"]);
  });

  it("only once: a second failure is the caller's", async () => {
    const net = network();
    const backend = createBackendFetch({ fetch: net.fetch });
    const user = backend.fetch("http://db.test/auth/v1/user", { method: "HEAD" });
    await net.settle("/user", "fail");
    await net.settle("/user", "fail");
    await expect(user).rejects.toThrow("network down");
    expect(backend.calls).toHaveLength(2);
  });

  it("a write is never sent twice", async () => {
    const net = network();
    const backend = createBackendFetch({ fetch: net.fetch });
    const saved = backend.fetch("http://db.test/rest/v1/notes", { method: "PATCH" });
    await net.settle("/notes", "fail");
    await expect(saved).rejects.toThrow("network down");
    expect(backend.calls).toEqual(["/rest/v1/notes"]);
  });

  it("a read given up on for its deadline is not sent again", async () => {
    const net = network();
    const backend = createBackendFetch({ fetch: net.fetch, timeoutMs: 20 });
    const user = backend.fetch("http://db.test/auth/v1/user");
    await expect(user).rejects.toThrow(/timed out|TimeoutError|aborted/i);
    expect(backend.calls).toEqual(["/auth/v1/user"]);
  });
});
