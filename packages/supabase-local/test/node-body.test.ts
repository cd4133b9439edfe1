// A stored object's body in process (tests calling `fetch` on the app, with no Node server to pipe
// it into): an ordinary Web stream that opens its file only when read, and closes it when the
// reader stops early.
import { Readable } from "node:stream";
import { expect, test } from "vitest";
import { nodeBody } from "../src/http/node-body.ts";

test("opened on first read, read whole, closed when cancelled", async () => {
  const opened: Readable[] = [];
  const open = () => {
    const stream = Readable.from([Buffer.from("one "), Buffer.from("two "), Buffer.from("three")]);
    opened.push(stream);
    return stream;
  };
  const response = new Response(nodeBody(open));
  expect(opened).toHaveLength(0);
  expect(await response.text()).toBe("one two three");
  expect(opened).toHaveLength(1);

  const early = new Response(nodeBody(open)).body as ReadableStream<Uint8Array>;
  const reader = early.getReader();
  expect(new TextDecoder().decode((await reader.read()).value)).toBe("one ");
  await reader.cancel();
  expect(opened[1]?.destroyed).toBe(true);
});
