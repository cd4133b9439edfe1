// A Postgres port connection's answers, read message by message as they stream
// (src/database/thread/postgres-notifications.js): the backend's notifications are taken out, and
// everything else reaches the connection byte for byte, however the stream is cut into chunks.
import { describe, expect, it } from "vitest";
import { BackendNotifications } from "../src/database/thread/postgres-notifications.js";

function message(type: string, body: Uint8Array): Uint8Array {
  const out = new Uint8Array(5 + body.length);
  out[0] = type.charCodeAt(0);
  new DataView(out.buffer).setInt32(1, body.length + 4);
  out.set(body, 5);
  return out;
}

function notification(channel: string, payload: string): Uint8Array {
  const text = new TextEncoder().encode(`${channel}\0${payload}\0`);
  const body = new Uint8Array(4 + text.length);
  body.set(text, 4);
  return message("A", body);
}

function concat(parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}

describe("a connection's answer stream", () => {
  const row = message("D", new TextEncoder().encode("a row of data, é"));
  const backends = notification("supabase_local_changes", "");
  const own = notification("mine", "hello ✓");
  const ready = message("Z", new Uint8Array([0x49]));
  const stream = concat([row, backends, row, own, backends, ready]);
  const expected = concat([row, row, own, ready]);

  it("takes out the backend's notifications at every cut of the stream into chunks", () => {
    for (let size = 1; size <= stream.length; size++) {
      const taken: Array<[string, string]> = [];
      const reader = new BackendNotifications((channel, payload) => {
        if (channel !== "supabase_local_changes") return false;
        taken.push([channel, payload]);
        return true;
      });
      const out: Uint8Array[] = [];
      for (let at = 0; at < stream.length; at += size) {
        out.push(...reader.pass(stream.subarray(at, at + size)));
      }
      expect(concat(out), `chunks of ${size}`).toEqual(expected);
      expect(taken).toEqual([
        ["supabase_local_changes", ""],
        ["supabase_local_changes", ""],
      ]);
    }
  });

  it("passes the stream as it came when no notification is the backend's", () => {
    const reader = new BackendNotifications(() => false);
    for (const cut of [1, 7, stream.length]) {
      const out: Uint8Array[] = [];
      for (let at = 0; at < stream.length; at += cut) {
        out.push(...reader.pass(stream.subarray(at, at + cut)));
      }
      expect(concat(out)).toEqual(stream);
    }
  });
});
