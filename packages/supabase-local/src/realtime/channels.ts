// The channels of every socket, by topic: a join puts a channel under its topic, a broadcast goes
// to the channels there. Public and private channels of the same name are apart, as upstream's
// tenant topics are (`Tenants.tenant_topic(tenant, sub_topic, public?)`).
import { broadcastJson, type Message, type UserBroadcast, type Vsn } from "./serializer.ts";

/** What the hub needs of a joined channel: where to deliver, and whether it sends to itself. */
export interface Member {
  readonly vsn: Vsn;
  readonly topic: string;
  readonly self: boolean;
  /** Whether broadcasts reach it: always on public channels, by RLS on private ones. */
  readonly readsBroadcast: boolean;
  /** Whether presence reaches it: always on public channels, by RLS on private ones. */
  readonly readsPresence: boolean;
  /** A JSON message (vsn's format) to this channel's socket. */
  push(message: Message): void;
  /** A user broadcast as a binary frame (2.0.0 sockets only). */
  pushBinary(broadcast: UserBroadcast): void;
  /** Told after each broadcast it was sent: upstream counts every delivery (the events limit). */
  delivered(): void;
  /** Stored broadcasts (by id) its join replayed, which it is not sent again. */
  readonly replayed?: ReadonlySet<string>;
}

/** A broadcast: a JSON payload ({type, event, payload}) or a user broadcast from a binary frame. */
export type Broadcast = { json: unknown } | { user: UserBroadcast };

/** One channel's tracked presence: its key, Phoenix's ref of this meta, and the client's payload. */
interface Tracked {
  key: string;
  ref: string;
  meta: Record<string, unknown>;
}

type PresenceMap = Record<string, { metas: Array<Record<string, unknown>> }>;

export class Hub {
  readonly #topics = new Map<string, Set<Member>>();
  readonly #presence = new Map<string, Map<Member, Tracked>>();
  #refs = 0;

  add(key: string, member: Member): void {
    let members = this.#topics.get(key);
    if (!members) this.#topics.set(key, (members = new Set()));
    members.add(member);
  }

  remove(key: string, member: Member): void {
    const members = this.#topics.get(key);
    if (members) {
      members.delete(member);
      if (members.size === 0) this.#topics.delete(key);
    }
    // the others see it leave
    this.untrack(key, member);
  }

  /** Sends to every channel under the key; to the sender too only when it asked (`self`). */
  broadcast(key: string, broadcast: Broadcast, from?: Member): void {
    const members = this.#topics.get(key);
    if (!members) return;
    for (const member of members) {
      if ((member === from && !member.self) || !member.readsBroadcast) continue;
      if (replayedTo(member, broadcast)) continue;
      deliver(member, broadcast);
      member.delivered();
    }
  }

  /**
   * Tracks a channel's presence under `presenceKey` (Phoenix Presence: a second track replaces the
   * first, a diff carries both), and sends the diff to the topic's presence readers.
   */
  track(key: string, member: Member, presenceKey: string, payload: Record<string, unknown>): void {
    let tracked = this.#presence.get(key);
    if (!tracked) this.#presence.set(key, (tracked = new Map()));
    const previous = tracked.get(member);
    const ref = `F${(++this.#refs).toString(36)}`;
    const meta = previous ? { ...payload, phx_ref_prev: previous.ref } : payload;
    tracked.set(member, { key: presenceKey, ref, meta });
    const joins = { [presenceKey]: { metas: [{ phx_ref: ref, ...meta }] } };
    const leaves = previous ? metasOf([previous]) : {};
    this.#diff(key, { joins, leaves });
  }

  untrack(key: string, member: Member): void {
    const tracked = this.#presence.get(key);
    const previous = tracked?.get(member);
    if (!tracked || !previous) return;
    tracked.delete(member);
    if (tracked.size === 0) this.#presence.delete(key);
    this.#diff(key, { joins: {}, leaves: metasOf([previous]) });
  }

  /** presence_state: everyone tracked on the topic, by key. */
  presenceState(key: string): PresenceMap {
    return metasOf([...(this.#presence.get(key)?.values() ?? [])]);
  }

  /** Called with the number of channels each presence diff went to (upstream counts fan-out). */
  onPresenceDiff: (count: number) => void = () => {};

  #diff(key: string, diff: { joins: PresenceMap; leaves: PresenceMap }): void {
    let count = 0;
    for (const member of this.#topics.get(key) ?? []) {
      if (!member.readsPresence) continue;
      count++;
      member.push({
        join_ref: null,
        ref: null,
        topic: member.topic,
        event: "presence_diff",
        payload: diff,
      });
    }
    if (count > 0) this.onPresenceDiff(count);
  }
}

function metasOf(tracked: Tracked[]): PresenceMap {
  const map: PresenceMap = {};
  for (const { key, ref, meta } of tracked) {
    (map[key] ??= { metas: [] }).metas.push({ phx_ref: ref, ...meta });
  }
  return map;
}

/** The hub's key of a topic: public and private channels of one name never meet. */
export function topicKey(subTopic: string, isPrivate: boolean): string {
  return `${isPrivate ? "private" : "public"}:${subTopic}`;
}

/** Whether this stored broadcast (its metadata's id) was already replayed to the member. */
function replayedTo(member: Member, broadcast: Broadcast): boolean {
  if (!member.replayed?.size || !("user" in broadcast)) return false;
  const id = broadcast.user.metadata?.id;
  return typeof id === "string" && member.replayed.has(id);
}

function deliver(member: Member, broadcast: Broadcast): void {
  if ("json" in broadcast) {
    member.push({
      join_ref: null,
      ref: null,
      topic: member.topic,
      event: "broadcast",
      payload: broadcast.json,
    });
    return;
  }
  if (member.vsn === "2.0.0") {
    member.pushBinary(broadcast.user);
    return;
  }
  // 1.0.0 has no binary frames: a JSON user payload goes as JSON, raw bytes cannot go at all
  const json = broadcastJson(broadcast.user);
  if (json) {
    member.push({
      join_ref: null,
      ref: null,
      topic: member.topic,
      event: "broadcast",
      payload: json,
    });
  }
}
