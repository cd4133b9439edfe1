// The Postgres port's framing (src/postgres-wire.js) on its own: frames whatever the chunking, and
// Postgres's limits judged from the header alone. The port's behaviour over real connections is in
// postgres-port.test.ts.
import { describe, expect, it } from "vitest";
import {
  FrontendReader,
  parseStartupPacket,
  WireError,
} from "../src/database/thread/postgres-wire.js";

function startup(params: Record<string, string>): Buffer {
  const body = Buffer.from(
    `${Object.entries(params)
      .map(([k, v]) => `${k}\0${v}\0`)
      .join("")}\0`,
  );
  const header = Buffer.alloc(8);
  header.writeInt32BE(body.length + 8, 0);
  header.writeInt32BE(0x00030000, 4);
  return Buffer.concat([header, body]);
}

function message(type: string, body: Buffer | string): Buffer {
  const data = Buffer.from(body);
  const header = Buffer.alloc(5);
  header.write(type, 0);
  header.writeInt32BE(data.length + 4, 1);
  return Buffer.concat([header, data]);
}

function thrown(fn: () => unknown): WireError {
  try {
    fn();
  } catch (error) {
    return error as WireError;
  }
  throw new Error("did not throw");
}

describe("FrontendReader", () => {
  it("frames a startup packet, then authentication and session messages, however they are split", () => {
    const packet = startup({ user: "postgres", database: "postgres" });
    const sasl = message("p", "SCRAM-SHA-256\0\0\0\0\0");
    const query = message("Q", "select 1\0");
    const sync = message("S", "");
    const stream = Buffer.concat([packet, sasl, query, sync]);
    for (const size of [1, 3, 7, stream.length]) {
      const reader = new FrontendReader();
      const frames: unknown[] = [];
      for (let at = 0; at < stream.length; at += size) {
        reader.push(stream.subarray(at, at + size));
        for (let frame = reader.next(); frame; frame = reader.next()) {
          frames.push(frame);
          if (frame.kind === "startup") reader.startupDone();
          else if (frame.type === 0x70) reader.authenticated();
        }
      }
      expect(frames, `chunks of ${size}`).toEqual([
        { kind: "startup", packet },
        { kind: "message", type: 0x70, message: sasl },
        { kind: "message", type: 0x51, message: query },
        { kind: "message", type: 0x53, message: sync },
      ]);
      expect(reader.buffered).toBe(0);
    }
  });

  it("refuses a length from the header alone, before the body arrives", () => {
    const reader = new FrontendReader();
    reader.push(Buffer.from([0x7f, 0xff, 0xff, 0xff]));
    expect(thrown(() => reader.next())).toMatchObject({
      message: expect.stringMatching(/^invalid length of startup packet/),
      fatal: undefined,
    });
    const tiny = new FrontendReader();
    tiny.push(Buffer.from([0, 0, 0, 7]));
    expect(thrown(() => tiny.next()).message).toMatch(/^invalid length of startup packet/);

    // A typed message's length word (itself included) against its type's limit, as pq_getmessage
    for (const [type, length, ok] of [
      ["S", 10_000, true],
      ["S", 10_001, false],
      ["X", 10_001, false],
      ["Q", 0x3fffffff - 1, true],
      ["Q", 0x3fffffff, false],
      ["d", 0x3fffffff, false],
      ["B", 3, false],
    ] as const) {
      const header = Buffer.alloc(5);
      header.write(type, 0);
      header.writeInt32BE(length, 1);
      const reader = new FrontendReader();
      reader.startupDone();
      reader.authenticated();
      reader.push(header);
      if (ok) expect(reader.next(), `${type} ${length}`).toBeUndefined();
      else
        expect(thrown(() => reader.next()).message, `${type} ${length}`).toMatch(
          /^invalid message length/,
        );
    }
  });

  it("answers an unknown type or a non-SASL message during authentication with Postgres's FATAL", () => {
    const reader = new FrontendReader();
    reader.startupDone();
    reader.push(message("Q", "select 1\0"));
    expect(thrown(() => reader.next())).toMatchObject({
      message: "expected SASL response, got message type 81",
      fatal: { code: "08P01" },
    });
    const ready = new FrontendReader();
    ready.startupDone();
    ready.authenticated();
    ready.push(message("z", ""));
    expect(thrown(() => ready.next())).toMatchObject({
      message: "invalid frontend message type 122",
      fatal: { code: "08P01" },
    });
  });
});

describe("parseStartupPacket", () => {
  it("reads the version and parameters, and refuses a packet without its terminator", () => {
    expect(parseStartupPacket(startup({ user: "postgres", application_name: "psql" }))).toEqual({
      major: 3,
      minor: 0,
      params: new Map([
        ["user", "postgres"],
        ["application_name", "psql"],
      ]),
    });
    const cut = startup({ user: "postgres" }).subarray(0, -1);
    expect(thrown(() => parseStartupPacket(cut))).toMatchObject({
      message: "invalid startup packet layout: expected terminator as last byte",
      fatal: { code: "08P01" },
    });
  });
});
