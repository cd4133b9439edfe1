// Phoenix's two wire formats, as Realtime speaks them (`vsn` in the socket's URL):
//  - 1.0.0: each frame a JSON object {join_ref, ref, topic, event, payload};
//  - 2.0.0: each text frame a JSON array [join_ref, ref, topic, event, payload], plus Realtime's
//    binary broadcast frames: a client's broadcast push (kind 3) and a broadcast to a client
//    (kind 4), each a header of byte lengths, the strings, then the user's payload (JSON or bytes).
// realtime-js 2.119 sends every broadcast with a string event as a kind-3 frame.

export type Vsn = "1.0.0" | "2.0.0";

export interface Message {
  join_ref: string | null;
  ref: string | null;
  topic: string;
  event: string;
  payload: unknown;
}

/** A user's broadcast as it travels between sockets: from a binary push or a JSON one. */
export interface UserBroadcast {
  event: string;
  /** JSON-encoded user payload (`json`), or raw bytes (`binary`). */
  encoding: "json" | "binary";
  payload: Uint8Array;
  /** The allowed metadata keys the client sent ({"persist": …}), or none. */
  metadata?: Record<string, unknown>;
}

export type Decoded =
  | { kind: "message"; message: Message }
  | { kind: "broadcast"; message: Message; broadcast: UserBroadcast }
  | { kind: "invalid" };

const KIND_USER_BROADCAST_PUSH = 3;
const KIND_USER_BROADCAST = 4;
const BINARY_ENCODING = 0;
const JSON_ENCODING = 1;

const text = new TextDecoder("utf-8", { fatal: true });
const encoder = new TextEncoder();

/** The versions upstream serves; any other `vsn` is refused at the upgrade. */
export function parseVsn(value: string | null): Vsn | undefined {
  // Phoenix's negotiate_serializer: no vsn is 1.0.0, and a version matches "~> 1.0.0" or
  // "~> 2.0.0" (any patch release of either)
  if (value === null) return "1.0.0";
  const match = /^([12])\.0\.(0|[1-9]\d*)$/.exec(value);
  if (!match) return undefined;
  return match[1] === "1" ? "1.0.0" : "2.0.0";
}

/** A frame from a client, or `invalid` when it is not one the version can carry. */
export function decode(vsn: Vsn, data: Uint8Array, binary: boolean): Decoded {
  if (binary) return vsn === "2.0.0" ? decodeBroadcastPush(data) : { kind: "invalid" };
  let value: unknown;
  try {
    value = JSON.parse(text.decode(data));
    // JSON nested so deep that it cannot be written out again (JSON.stringify's stack, where
    // JSON.parse has none) could be neither measured, stored nor passed on
    JSON.stringify(value);
  } catch {
    return { kind: "invalid" };
  }
  let fields: unknown[];
  if (vsn === "2.0.0") {
    if (!Array.isArray(value) || value.length !== 5) return { kind: "invalid" };
    fields = value;
  } else {
    if (typeof value !== "object" || value === null || Array.isArray(value)) {
      return { kind: "invalid" };
    }
    const object = value as Record<string, unknown>;
    fields = [
      object.join_ref ?? null,
      object.ref ?? null,
      object.topic,
      object.event,
      object.payload,
    ];
  }
  const [joinRef, ref, topic, event, payload] = fields;
  if (typeof topic !== "string" || typeof event !== "string") return { kind: "invalid" };
  return {
    kind: "message",
    message: { join_ref: refString(joinRef), ref: refString(ref), topic, event, payload },
  };
}

function refString(value: unknown): string | null {
  if (typeof value === "string") return value;
  if (typeof value === "number") return String(value);
  return null;
}

function decodeBroadcastPush(data: Uint8Array): Decoded {
  if (data.length < 7 || data[0] !== KIND_USER_BROADCAST_PUSH) return { kind: "invalid" };
  const lengths = [data[1], data[2], data[3], data[4], data[5]] as number[];
  const encoding = data[6];
  if (encoding !== BINARY_ENCODING && encoding !== JSON_ENCODING) return { kind: "invalid" };
  let offset = 7;
  const strings: string[] = [];
  try {
    for (const length of lengths) {
      if (offset + length > data.length) return { kind: "invalid" };
      strings.push(text.decode(data.subarray(offset, offset + length)));
      offset += length;
    }
  } catch {
    return { kind: "invalid" };
  }
  const [joinRef, ref, topic, event, metadataText] = strings as [
    string,
    string,
    string,
    string,
    string,
  ];
  let metadata: Record<string, unknown> | undefined;
  if (metadataText !== "") {
    try {
      const parsed: unknown = JSON.parse(metadataText);
      if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed)) {
        return { kind: "invalid" };
      }
      metadata = parsed as Record<string, unknown>;
    } catch {
      return { kind: "invalid" };
    }
  }
  const payload = data.slice(offset);
  if (encoding === JSON_ENCODING) {
    try {
      JSON.parse(text.decode(payload));
    } catch {
      return { kind: "invalid" };
    }
  }
  const broadcast: UserBroadcast = {
    event,
    encoding: encoding === JSON_ENCODING ? "json" : "binary",
    payload,
    metadata,
  };
  return {
    kind: "broadcast",
    broadcast,
    message: {
      join_ref: joinRef === "" ? null : joinRef,
      ref: ref === "" ? null : ref,
      topic,
      event: "broadcast",
      payload: broadcastJson(broadcast),
    },
  };
}

/**
 * A user broadcast as JSON clients see it: {type, event, payload}, and its metadata as `meta`
 * (upstream's convert_to_json_broadcast); bytes have no JSON form.
 */
export function broadcastJson(broadcast: UserBroadcast): Record<string, unknown> | undefined {
  if (broadcast.encoding === "binary") return undefined;
  const json: Record<string, unknown> = {
    type: "broadcast",
    event: broadcast.event,
    payload: JSON.parse(text.decode(broadcast.payload)),
  };
  if (broadcast.metadata && Object.keys(broadcast.metadata).length > 0) {
    json.meta = broadcast.metadata;
  }
  return json;
}

/** A message for a client, in its version's text format. */
export function encode(vsn: Vsn, message: Message): string {
  if (vsn === "2.0.0") {
    return JSON.stringify([
      message.join_ref,
      message.ref,
      message.topic,
      message.event,
      message.payload,
    ]);
  }
  // Phoenix's V1 serializer writes four fields (no join_ref), in Jason's order for a small map
  return JSON.stringify({
    event: message.event,
    payload: message.payload,
    ref: message.ref,
    topic: message.topic,
  });
}

/**
 * A postgres_changes event in the version's text format, around the change's JSON encoded once
 * for all its subscribers (upstream's dispatcher caches the encoded message too): `postgres_changes`
 * with `{ids, data}`, or, to a channel joined in the legacy form (no `config`), the change's type
 * as the event and the change itself as the payload, as upstream's MessageDispatcher sends it.
 */
export function encodeChange(
  vsn: Vsn,
  topic: string,
  change: { ids: number[]; type: string } | { legacy: true; type: string },
  dataJson: string,
): string {
  const [event, payload] =
    "legacy" in change
      ? [change.type, dataJson]
      : ["postgres_changes", `{"ids":${JSON.stringify(change.ids)},"data":${dataJson}}`];
  const quoted = JSON.stringify(topic);
  const eventJson = JSON.stringify(event);
  if (vsn === "2.0.0") return `[null,null,${quoted},${eventJson},${payload}]`;
  return `{"event":${eventJson},"payload":${payload},"ref":null,"topic":${quoted}}`;
}

/** The most bytes a binary frame's topic, event or metadata can have: its length is one byte. */
export const MAX_FRAME_STRING_BYTES = 255;

/**
 * A user broadcast for a 2.0.0 client: a kind-4 binary frame; undefined when its topic, event or
 * metadata is over 255 bytes (upstream's serializer raises, and that client gets nothing).
 */
export function encodeBroadcast(topic: string, broadcast: UserBroadcast): Uint8Array | undefined {
  const topicBytes = encoder.encode(topic);
  const eventBytes = encoder.encode(broadcast.event);
  const metadataBytes = encoder.encode(
    broadcast.metadata && Object.keys(broadcast.metadata).length > 0
      ? JSON.stringify(broadcast.metadata)
      : "",
  );
  if (
    Math.max(topicBytes.length, eventBytes.length, metadataBytes.length) > MAX_FRAME_STRING_BYTES
  ) {
    return undefined;
  }
  const header = 5;
  const frame = new Uint8Array(
    header +
      topicBytes.length +
      eventBytes.length +
      metadataBytes.length +
      broadcast.payload.length,
  );
  frame[0] = KIND_USER_BROADCAST;
  frame[1] = topicBytes.length;
  frame[2] = eventBytes.length;
  frame[3] = metadataBytes.length;
  frame[4] = broadcast.encoding === "json" ? JSON_ENCODING : BINARY_ENCODING;
  let offset = header;
  for (const part of [topicBytes, eventBytes, metadataBytes, broadcast.payload]) {
    frame.set(part, offset);
    offset += part.length;
  }
  return frame;
}

/** A JSON broadcast from a client, in the binary form kept for 2.0.0 subscribers. */
export function userBroadcastFromJson(payload: unknown): UserBroadcast | undefined {
  if (typeof payload !== "object" || payload === null) return undefined;
  const { event, payload: inner } = payload as Record<string, unknown>;
  if (typeof event !== "string") return undefined;
  return { event, encoding: "json", payload: encoder.encode(JSON.stringify(inner ?? {})) };
}
