// One client's socket, as a Phoenix socket with Realtime's one channel module behaves: heartbeats
// on `phoenix`, `phx_join` on `realtime:<name>` (any other topic is "unmatched topic"), one channel
// per topic (a second join closes the first), `phx_leave` answered and closed, and each channel's
// `broadcast` and `access_token` messages as upstream's RealtimeChannel handles them.
import type { PGlite } from "@electric-sql/pglite";
import type { WebSocket } from "ws";
import type { Claims } from "../http/jwt.ts";
import { authorize, type Policies, type RequestHeaders } from "./authorization.ts";
import { type Broadcast, type Hub, type Member, topicKey } from "./channels.ts";
import { ClientPresenceWindow, type Limits } from "./limits.ts";
import {
  type Binding,
  bindings,
  type ChangeFeed,
  type ChangeSubscriber,
} from "./postgres-changes.ts";
import {
  type Decoded,
  decode,
  encode,
  encodeBroadcast,
  encodeChange,
  type Message,
  type UserBroadcast,
  type Vsn,
} from "./serializer.ts";
import { confirmToken, type Verify } from "./tokens.ts";

export interface SocketOptions {
  vsn: Vsn;
  /** The socket's own token: the gateway's bearer (the publishable key's is the anon JWT). */
  token: string;
  verify: Verify;
  hub: Hub;
  /** postgres_changes: the database's subscriptions and change feed. */
  changes: ChangeFeed;
  /** The project's database: private channels are authorized by its RLS on realtime.messages. */
  db: PGlite;
  /** The tenant limits and their counters, shared by the backend's sockets. */
  limits: Limits;
  /** The upgrade's `x-` headers: request.headers for private channels' policies. */
  headers: RequestHeaders;
  /** Silence (no frame from the client) after which the socket is closed. */
  idleTimeoutMs: number;
  /** How long a frame to the client may stay unwritten before the socket ends. */
  sendTimeoutMs: number;
  /** Bytes the socket may hold unsent before it ends. */
  maxBufferedBytes: number;
}

/** Cowboy counts silence in tenths of the timeout (IDLE_TIMEOUT_TICKS). */
const IDLE_TICKS = 10;

interface JoinConfig {
  /**
   * `broadcast.self`, `.ack` and `.replication_ready`, or what upstream raises reading the last
   * (after the join's checks).
   */
  broadcast: { self: boolean; ack: boolean; replicationReady: boolean } | { raised: string };
  /** Whether `broadcast` has a `replay` key (any value), and its value: upstream reads it raw. */
  replay: { value: unknown } | undefined;
  presenceKey: string;
  presenceEnabled: boolean;
  private: boolean;
  postgresChanges: Array<Record<string, unknown>>;
  /** No `config` in the join: the binding is the topic's (upstream's pre-`config` clients). */
  legacy: boolean;
}

class Channel implements Member, ChangeSubscriber {
  readonly vsn: Vsn;
  readonly topic: string;
  readonly subTopic: string;
  readonly joinRef: string | null;
  readonly key: string;
  readonly self: boolean;
  readonly ack: boolean;
  readonly isPrivate: boolean;
  readonly presenceKey: string;
  presenceEnabled: boolean;
  /** Its postgres_changes bindings, in the client's order. */
  readonly bindings: Binding[];
  /** Joined without `config`: its one binding comes from the topic, its events are the old form. */
  readonly legacy: boolean;
  /** Whether it has ended (its subscriptions, if made meanwhile, go at once). */
  closed = false;
  /** Its client's presence calls in the current window. */
  readonly presenceCalls: ClientPresenceWindow;
  /** The last tracked payload (the same again is a no-op, as upstream). */
  tracked: string | undefined;
  /** A private channel's rights, from RLS at the join and at each new token (upstream caches them). */
  policies: Policies | undefined;
  token: string;
  timer: NodeJS.Timeout | undefined;
  readonly #socket: RealtimeSocket;

  constructor(
    socket: RealtimeSocket,
    topic: string,
    joinRef: string | null,
    config: JoinConfig,
    token: string,
  ) {
    this.#socket = socket;
    this.vsn = socket.vsn;
    this.topic = topic;
    this.subTopic = topic.slice("realtime:".length);
    this.joinRef = joinRef;
    this.key = topicKey(this.subTopic, config.private);
    // (a join whose broadcast config raised is refused before the channel is kept)
    const { self = false, ack = false } = "raised" in config.broadcast ? {} : config.broadcast;
    this.self = self;
    this.ack = ack;
    this.isPrivate = config.private;
    // upstream's default key: a UUID of the channel's own
    this.presenceKey = config.presenceKey || crypto.randomUUID();
    this.presenceEnabled = config.presenceEnabled;
    this.legacy = config.legacy;
    this.bindings = bindings(
      config.legacy ? [legacyParams(this.subTopic)] : config.postgresChanges,
    );
    this.token = token;
    const { maxClientPresenceEventsPerWindow, clientPresenceWindowMs } = socket.limits.settings;
    this.presenceCalls = new ClientPresenceWindow(
      maxClientPresenceEventsPerWindow,
      clientPresenceWindowMs,
    );
  }

  get readsBroadcast(): boolean {
    return !this.isPrivate || this.policies?.broadcast.read === true;
  }

  get readsPresence(): boolean {
    return !this.isPrivate || this.policies?.presence.read === true;
  }

  /**
   * Whether a private channel's rights let it stay joined: broadcast's read right, or presence's
   * while presence is on (upstream evaluates presence's only then).
   */
  mayRead(policies: Policies): boolean {
    return policies.broadcast.read || (this.presenceEnabled && policies.presence.read);
  }

  /** Whether new rights take away a read right the old ones gave (presence's only while on). */
  lostRead(before: Policies, after: Policies): boolean {
    return (
      (before.broadcast.read && !after.broadcast.read) ||
      (this.presenceEnabled && before.presence.read && !after.presence.read)
    );
  }

  push(message: Message): void {
    this.#socket.send(message);
  }

  pushBinary(broadcast: UserBroadcast): void {
    const frame = encodeBroadcast(this.topic, broadcast);
    // a topic, event or metadata a frame cannot hold: nothing, never a frame with wrapped lengths
    if (frame) this.#socket.sendBinary(frame);
  }

  delivered(): void {
    this.#socket.counted(this);
  }

  /** The ids of the stored broadcasts its join replayed: not delivered to it again. */
  readonly replayed = new Set<string>();

  /** A change, as upstream's fastlane sends it: no refs, the bindings' ids and the change. */
  change(ids: number[], dataJson: string, type: string): void {
    const change = this.legacy ? { legacy: true as const, type } : { ids, type };
    this.#socket.sendText(encodeChange(this.vsn, this.topic, change, dataJson));
  }
}

export class RealtimeSocket {
  readonly vsn: Vsn;
  readonly limits: Limits;
  readonly #ws: WebSocket;
  readonly #options: SocketOptions;
  readonly #channels = new Map<string, Channel>();
  /** Messages are handled one at a time, in order, as a Phoenix socket's process does. */
  #queue: Promise<void> = Promise.resolve();
  /**
   * Closed: its channels ended. A join or a new token still waiting (on the token's check, the
   * database's RLS) when it closed goes no further: after each wait, the path checks.
   */
  #ended = false;
  /** Ticks of the idle timer since the client's last frame. */
  #silentTicks = 0;
  /** Frames handed to the connection, and of those, frames written out to it (in order). */
  #sent = 0;
  #written = 0;
  /** When each frame not yet written out was sent, by its number. */
  readonly #unwritten = new Map<number, number>();
  #writeWatch: NodeJS.Timeout | undefined;

  constructor(ws: WebSocket, options: SocketOptions) {
    this.#ws = ws;
    this.#options = options;
    this.vsn = options.vsn;
    this.limits = options.limits;
    this.#watchSilence(options.idleTimeoutMs);
    ws.on("message", (data, isBinary) => {
      this.#silentTicks = 0;
      const decoded = decode(this.vsn, toBytes(data), isBinary);
      // Heartbeats are the socket's, answered at once, as Phoenix's socket process answers them
      // while its channels' processes work: a join or a new token being authorized in the
      // database never makes the client's heartbeat time out.
      if (decoded.kind === "message" && isHeartbeat(decoded.message)) {
        this.#reply(decoded.message, "ok", {});
        return;
      }
      this.#queue = this.#queue
        .then(() => this.#receive(decoded))
        .catch((error) => {
          console.error("[supabase-local] realtime:", error);
          this.#ws.close(1011);
        });
    });
    ws.on("close", () => this.#closeAll());
    ws.on("error", () => this.#closeAll());
  }

  /**
   * Phoenix's idle timeout, as cowboy keeps it: a timer ticks every tenth of the timeout, any
   * frame from the client (a heartbeat or not, a ping or pong too) resets the count, and the tick
   * after ten silent ones closes the socket with 1000 and no reason, its channels ending at once.
   */
  #watchSilence(timeoutMs: number): void {
    const heard = () => {
      this.#silentTicks = 0;
    };
    this.#ws.on("ping", heard);
    this.#ws.on("pong", heard);
    const timer = setInterval(
      () => {
        if (this.#ended) {
          clearInterval(timer);
          return;
        }
        if (this.#silentTicks < IDLE_TICKS) {
          this.#silentTicks++;
          return;
        }
        clearInterval(timer);
        this.#closeAll();
        this.#ws.close(1000);
      },
      Math.max(1, Math.floor(timeoutMs / IDLE_TICKS)),
    );
    timer.unref();
    this.#ws.once("close", () => clearInterval(timer));
  }

  /**
   * A message reached one of this socket's channels: counted (upstream's :update_rate_counter);
   * once the events limit is reached the channel shuts down.
   */
  counted(channel: Channel): void {
    const { events } = this.limits;
    events.add();
    if (events.triggered && this.#channels.get(channel.topic) === channel) {
      this.#shutdown(channel, "Too many messages per second");
    }
  }

  send(message: Message): void {
    this.#write(encode(this.vsn, message), false);
  }

  sendText(frame: string): void {
    this.#write(frame, false);
  }

  sendBinary(frame: Uint8Array): void {
    this.#write(frame, true);
  }

  /**
   * A frame to the client. A client that stops reading is not kept for ever: past
   * `maxBufferedBytes` unsent the socket ends at once, and a frame still unwritten after
   * `sendTimeoutMs` ends it too (its channels leave), as upstream's socket ends when a send blocks
   * that long. The client sees the connection drop, with no close frame (1006).
   */
  #write(frame: string | Uint8Array, binary: boolean): void {
    if (this.#ws.readyState !== this.#ws.OPEN) return;
    const number = this.#sent++;
    this.#unwritten.set(number, performance.now());
    this.#ws.send(frame, { binary }, () => {
      this.#unwritten.delete(number);
      this.#written = number + 1;
    });
    if (this.#ws.bufferedAmount > this.#options.maxBufferedBytes) {
      this.#drop();
      return;
    }
    this.#watchWrites();
  }

  /** While frames are unwritten: checks, ten times per send timeout, that the oldest is not late. */
  #watchWrites(): void {
    if (this.#writeWatch) return;
    const { sendTimeoutMs } = this.#options;
    this.#writeWatch = setInterval(
      () => {
        const oldest = this.#unwritten.get(this.#written);
        if (this.#ended || oldest === undefined) {
          clearInterval(this.#writeWatch);
          this.#writeWatch = undefined;
        } else if (performance.now() - oldest > sendTimeoutMs) {
          this.#drop();
        }
      },
      Math.max(1, Math.floor(sendTimeoutMs / IDLE_TICKS)),
    );
    this.#writeWatch.unref();
  }

  /** The client reads too little: the socket ends at once, its channels with it. */
  #drop(): void {
    clearInterval(this.#writeWatch);
    this.#writeWatch = undefined;
    this.#unwritten.clear();
    this.#closeAll();
    this.#ws.terminate();
  }

  async #receive(decoded: Decoded): Promise<void> {
    // the messages still queued when the socket closed have no one to answer
    if (this.#ended) return;
    // A frame the serializer cannot read is dropped and the socket stays, as upstream's socket
    // (RealtimeWeb.Socket.handle_in) logs MalformedWebSocketMessage and goes on
    if (decoded.kind === "invalid") return;
    const { message } = decoded;
    const { topic, event } = message;
    if (event === "phx_join") {
      await this.#join(message);
      return;
    }
    const channel = this.#channels.get(topic);
    if (!channel || (message.join_ref !== null && message.join_ref !== channel.joinRef)) {
      this.#reply(message, "error", { reason: "unmatched topic" });
      return;
    }
    if (event === "phx_leave") {
      this.#reply(message, "ok", {});
      this.#close(channel);
      return;
    }
    if (event === "broadcast") {
      // a private channel's broadcast needs the write policy; without it upstream drops it,
      // with no reply even when `ack` was asked for
      if (channel.isPrivate && !channel.policies?.broadcast.write) return;
      this.limits.events.add();
      const size =
        decoded.kind === "broadcast"
          ? decoded.broadcast.payload.length
          : Buffer.byteLength(JSON.stringify(message.payload ?? null));
      if (this.limits.payloadTooLarge(size)) {
        // upstream's {:error, :payload_size_exceeded}, to an `ack` only
        if (channel.ack) this.#reply(message, "error", "payload_size_exceeded");
        return;
      }
      // a client's frame metadata (`persist`) is not passed on, as upstream's build_broadcast
      const broadcast: Broadcast =
        decoded.kind === "broadcast"
          ? { user: { ...decoded.broadcast, metadata: undefined } }
          : { json: message.payload };
      this.#options.hub.broadcast(channel.key, broadcast, channel);
      if (channel.ack) this.#reply(message, "ok", {});
      return;
    }
    if (event === "presence") {
      this.#presence(channel, message);
      return;
    }
    if (event === "access_token") {
      await this.#accessToken(channel, message.payload);
      return;
    }
    // upstream counts, logs and drops any other event
    this.limits.events.add();
  }

  async #join(message: Message): Promise<void> {
    const { topic } = message;
    if (!topic.startsWith("realtime:")) {
      this.#reply(message, "error", { reason: "unmatched topic" });
      return;
    }
    if (topic === "realtime:") {
      this.#reply(message, "error", { reason: "TopicNameRequired: You must provide a topic name" });
      return;
    }
    // Phoenix: a second join of a topic closes the channel already there
    const existing = this.#channels.get(topic);
    if (existing) this.#close(existing);
    // upstream's order: concurrent users, joins per second, channels per client
    const { limits } = this;
    if (limits.userRefused(this)) {
      this.#reply(message, "error", {
        reason: "ConnectionRateLimitReached: Too many connected users",
      });
      return;
    }
    if (limits.joins.triggered) {
      this.#reply(message, "error", {
        reason: "ClientJoinRateLimitReached: Too many joins per second",
      });
      // and the socket is disconnected
      this.#ws.close(1000);
      return;
    }
    limits.joins.add();
    if (this.#channels.size >= limits.settings.maxChannelsPerClient) {
      this.#reply(message, "error", { reason: "ChannelRateLimitReached: Too many channels" });
      return;
    }
    const params = isObject(message.payload) ? message.payload : {};
    // upstream's new_api?: a join payload with a `config` key, whatever its value
    const config = joinConfig(params.config, !Object.hasOwn(params, "config"));
    const token = joinToken(params, this.#options.token);
    const confirmed = await confirmToken(token, this.#options.verify);
    if (this.#ended) return;
    if (!confirmed.ok) {
      this.#reply(message, "error", { reason: `${confirmed.code}: ${confirmed.message}` });
      return;
    }
    const { broadcast } = config;
    const channel = new Channel(this, topic, message.join_ref, config, token);
    if (config.private) {
      channel.policies = await authorize(
        this.#options.db,
        channel.subTopic,
        confirmed.claims,
        this.#options.headers,
      );
      // the socket closed meanwhile: nothing of the channel was kept yet, nothing is now
      if (this.#ended) return;
      // upstream's join needs a read right: broadcast's, or presence's when presence is on (a
      // member with only the latter gets no broadcast: readsBroadcast)
      if (!channel.mayRead(channel.policies)) {
        this.#reply(message, "error", {
          reason: `Unauthorized: ${unauthorized(channel.subTopic)}`,
        });
        return;
      }
    }
    let replayed: Replayed[] = [];
    if (config.replay) {
      const replay = await this.#replay(channel, config.replay.value);
      if (this.#ended) return;
      if (typeof replay === "string") {
        this.#reply(message, "error", { reason: replay });
        return;
      }
      replayed = replay;
    }
    if ("raised" in broadcast) {
      // upstream reads `replication_ready` once the join's checks have passed (and raises then)
      this.#reply(message, "error", { reason: `UnknownErrorOnChannel: ${broadcast.raised}` });
      return;
    }
    this.#channels.set(topic, channel);
    this.#options.hub.add(channel.key, channel);
    limits.userJoined(this);
    this.#schedule(channel, confirmed.recheckIn);
    // each binding as the client sent it, with its id, in the client's order
    const postgresChanges = channel.bindings.map((b) => ({ ...b.params, id: b.id }));
    this.#reply(message, "ok", { postgres_changes: postgresChanges });
    // the replayed messages, as upstream's channel pushes them to itself during the join
    for (const row of replayed) {
      channel.push({
        join_ref: channel.joinRef,
        ref: null,
        topic,
        event: "broadcast",
        payload: {
          payload: row.payload,
          event: row.event,
          type: "broadcast",
          meta: { replayed: true, id: row.id },
        },
      });
    }
    // the change feed here is always up: upstream's answer once its replication connection is
    if (broadcast.replicationReady) {
      this.#system(channel, "system", "ok", "Replication connection established");
    }
    if (channel.presenceEnabled && !this.#presenceState(channel)) return;
    if (channel.bindings.length > 0) this.#subscribeChanges(channel, confirmed.claims);
  }

  /**
   * The channel's postgres_changes subscribed after the join's reply, as upstream's
   * :postgres_subscribe: "Subscribed to PostgreSQL", or the reason as a system error.
   */
  #subscribeChanges(channel: Channel, claims: Claims): void {
    const { changes } = this.#options;
    changes
      .subscribe(channel, channel.bindings, claims)
      .then((refused) => {
        if (channel.closed) {
          void changes.unsubscribe(channel.bindings);
          return;
        }
        if (refused) this.#system(channel, "postgres_changes", "error", refused);
        else this.#system(channel, "postgres_changes", "ok", "Subscribed to PostgreSQL");
      })
      .catch((error) => {
        if (channel.closed) return;
        this.#system(channel, "postgres_changes", "error", String(error));
      });
  }

  /** track / untrack, as upstream's PresenceHandler: a private channel needs the write policy. */
  #presence(channel: Channel, message: Message): void {
    const payload = isObject(message.payload) ? message.payload : {};
    if (typeof payload.event !== "string") {
      this.#reply(message, "ok", {});
      return;
    }
    // a client's presence calls per window come first (upstream's limit_client_presence_event)
    if (!channel.presenceCalls.allow()) {
      this.#shutdown(channel, "Client presence rate limit exceeded");
      return;
    }
    const event = payload.event.toLowerCase();
    if (event === "track") {
      if (channel.isPrivate && !channel.policies?.presence.write) {
        this.#reply(message, "error", {});
        return;
      }
      // upstream's Map.get(payload, "payload", %{}): a null payload is there, and no map
      const meta = Object.hasOwn(payload, "payload") ? payload.payload : {};
      if (!isObject(meta)) {
        this.#reply(message, "error", { reason: "Presence track payload must be a map" });
        return;
      }
      const json = JSON.stringify(meta);
      if (json !== channel.tracked) {
        if (this.limits.payloadTooLarge(Buffer.byteLength(json))) {
          this.#shutdown(channel, "Track message size exceeded");
          return;
        }
        if (!this.#presenceEvent(channel)) return;
        this.#options.hub.track(channel.key, channel, channel.presenceKey, meta);
        channel.tracked = json;
      }
    } else if (event === "untrack") {
      this.#options.hub.untrack(channel.key, channel);
      channel.tracked = undefined;
    } else {
      this.#reply(message, "error", {});
      return;
    }
    this.#reply(message, "ok", {});
    // a track is what enables presence for a channel that joined without it: it gets the state now
    if (event === "track" && !channel.presenceEnabled) {
      channel.presenceEnabled = true;
      this.#presenceState(channel);
    }
  }

  /** The tenant's presence events (upstream's limit_presence_event): false once over the limit. */
  #presenceEvent(channel: Channel): boolean {
    const { presence } = this.limits;
    if (presence.avg > presence.limit) {
      this.#shutdown(channel, "Too many presence messages per second");
      return false;
    }
    presence.add();
    return true;
  }

  /** presence_state to a channel that may read presence; false when the limit shut it down. */
  #presenceState(channel: Channel): boolean {
    if (!channel.readsPresence) return true;
    if (!this.#presenceEvent(channel)) return false;
    channel.push({
      join_ref: channel.joinRef,
      ref: null,
      topic: channel.topic,
      event: "presence_state",
      payload: this.#options.hub.presenceState(channel.key),
    });
    return true;
  }

  /**
   * A join's `broadcast.replay` (upstream's can_replay? and maybe_replay_messages): on a private
   * channel that may read broadcasts, the last `limit` (1 to 25, 25 unless given) broadcasts
   * stored for the topic since `since` (milliseconds), oldest first; kept on the channel, so the
   * same message is not delivered to it again live. The refusal's reason otherwise.
   */
  async #replay(channel: Channel, params: unknown): Promise<Replayed[] | string> {
    if (channel.isPrivate && !channel.policies?.broadcast.read) {
      return `Unauthorized: ${unauthorized(channel.subTopic)}`;
    }
    if (!channel.isPrivate) {
      return "UnableToReplayMessages: Replay is not allowed for public channels";
    }
    if (!isObject(params)) return [];
    const since = params.since;
    const limit = truthy(params.limit) ? params.limit : 25;
    if (
      !Number.isInteger(since) ||
      !Number.isInteger(limit) ||
      (since as number) > MAX_UNIX_MS ||
      (since as number) < MIN_UNIX_MS
    ) {
      return "UnableToReplayMessages: Replay params are not valid";
    }
    try {
      const { rows } = await this.#options.db.query<Replayed>(
        `select id, event, payload from realtime.messages
         where topic = $1 and private and extension = 'broadcast'
           and inserted_at >= ($2::timestamptz at time zone 'utc')
           and inserted_at < (now() at time zone 'utc') + interval '1 minute'
         order by inserted_at desc limit $3`,
        [
          channel.subTopic,
          new Date(since as number).toISOString(),
          Math.max(Math.min(limit as number, 25), 1),
        ],
      );
      for (const row of rows) channel.replayed.add(row.id);
      return rows.reverse();
    } catch {
      return "UnableToReplayMessages: Realtime was unable to replay messages";
    }
  }

  /** access_token: `sb_` keys, nulls and the same token are ignored; another is confirmed. */
  async #accessToken(channel: Channel, payload: unknown): Promise<void> {
    const token = isObject(payload) ? payload.access_token : undefined;
    if (typeof token !== "string" || token.startsWith("sb_") || token === channel.token) return;
    channel.token = token;
    const confirmed = await confirmToken(token, this.#options.verify);
    // the channel (or its socket) ended meanwhile: no timer, no subscription for it
    if (channel.closed) return;
    if (!confirmed.ok) {
      this.#shutdown(channel, confirmed.message);
      return;
    }
    if (channel.isPrivate) {
      // the rights afresh, as at a join: no read right left shuts the channel down, and so does
      // losing one the old token had (upstream's check_read_permissions_revoked)
      const before = channel.policies;
      channel.policies = await authorize(
        this.#options.db,
        channel.subTopic,
        confirmed.claims,
        this.#options.headers,
      );
      if (channel.closed) return;
      if (!channel.mayRead(channel.policies)) {
        this.#shutdown(channel, unauthorized(channel.subTopic));
        return;
      }
      if (before && channel.lostRead(before, channel.policies)) {
        this.#shutdown(
          channel,
          `You no longer have permission to read from this Channel topic: ${channel.subTopic}`,
        );
        return;
      }
    }
    this.#schedule(channel, confirmed.recheckIn);
    // upstream subscribes again with the new claims (and says so again)
    if (channel.bindings.length > 0) this.#subscribeChanges(channel, confirmed.claims);
  }

  /** Re-confirms the channel's token when its time is up (upstream's :confirm_token). */
  #schedule(channel: Channel, delay: number): void {
    clearTimeout(channel.timer);
    channel.timer = setTimeout(() => {
      this.#queue = this.#queue.then(async () => {
        if (this.#channels.get(channel.topic) !== channel) return;
        const confirmed = await confirmToken(channel.token, this.#options.verify);
        if (channel.closed) return;
        if (confirmed.ok) this.#schedule(channel, confirmed.recheckIn);
        else this.#shutdown(channel, confirmed.message);
      });
    }, delay);
    channel.timer.unref();
  }

  /** Upstream's shutdown_response: a system error on the channel, then the channel closes. */
  #shutdown(channel: Channel, message: string): void {
    this.#system(channel, "system", "error", message);
    this.#close(channel);
  }

  #system(channel: Channel, extension: string, status: string, text: string): void {
    channel.push({
      join_ref: channel.joinRef,
      ref: null,
      topic: channel.topic,
      event: "system",
      payload: { extension, status, message: text, channel: channel.subTopic },
    });
  }

  /** The channel ends: out of the hub, and phx_close to the client (Phoenix's on any stop). */
  #close(channel: Channel): void {
    this.#end(channel);
    this.#channels.delete(channel.topic);
    this.send({
      join_ref: channel.joinRef,
      ref: channel.joinRef,
      topic: channel.topic,
      event: "phx_close",
      payload: {},
    });
  }

  #closeAll(): void {
    this.#ended = true;
    for (const channel of this.#channels.values()) this.#end(channel);
    this.#channels.clear();
    this.limits.userLeft(this);
  }

  /** What a channel holds goes: its timer, its place in the hub, its change subscriptions. */
  #end(channel: Channel): void {
    channel.closed = true;
    clearTimeout(channel.timer);
    this.#options.hub.remove(channel.key, channel);
    void this.#options.changes.unsubscribe(channel.bindings);
  }

  #reply(message: Message, status: "ok" | "error", response: unknown): void {
    this.send({
      join_ref: message.join_ref,
      ref: message.ref,
      topic: message.topic,
      event: "phx_reply",
      payload: { status, response },
    });
  }
}

/**
 * The join's token, as upstream's assign_access_token: an `sb_` key (in `access_token`, or else
 * `user_token`) means the socket's own (the publishable key's is the anon JWT); otherwise
 * `user_token` before `access_token`, and the socket's when neither is a string.
 */
function joinToken(params: Record<string, unknown>, socketToken: string): string {
  const first = truthy(params.access_token) ? params.access_token : params.user_token;
  if (typeof first === "string" && first.startsWith("sb_")) return socketToken;
  if (typeof params.user_token === "string") return params.user_token;
  if (typeof params.access_token === "string") return params.access_token;
  return socketToken;
}

/** A stored broadcast a join replays. */
interface Replayed {
  id: string;
  event: string | null;
  payload: unknown;
}

/** The unix milliseconds Elixir's DateTime.from_unix takes: years -9999 to 9999. */
const MAX_UNIX_MS = 253_402_300_799_999;
const MIN_UNIX_MS = -377_705_116_800_000;

function isHeartbeat(message: Message): boolean {
  return message.topic === "phoenix" && message.event === "heartbeat";
}

function unauthorized(topic: string): string {
  return `You do not have permissions to read from this Channel topic: ${topic}`;
}

/**
 * The binding of a channel joined in the legacy form, as upstream still reads it from the topic:
 * `realtime:schema[:table[:filter]]` (the filter is the rest, colons and all).
 */
function legacyParams(subTopic: string): Record<string, string> {
  const [schema = "", table, ...rest] = subTopic.split(":");
  if (table === undefined) return { schema };
  if (rest.length === 0) return { schema, table };
  return { schema, table, filter: rest.join(":") };
}

/**
 * The join's `config` as upstream's join reads it: through its payload schema, where `private`,
 * `broadcast.self`, `.ack`, `.replication_ready` and `presence.enabled` are FlexibleBooleans (true,
 * false, or "true"/"false" in any case; any other value is dropped for the default, false), a
 * `config`, `broadcast` or `presence` that is not a map is dropped the same way, and a presence key
 * is kept only as a string. One read is outside the schema: `replication_ready` by Elixir's
 * Access, which raises on a `config` or `broadcast` that is neither a map nor null; the
 * exception's message is then the join's UnknownErrorOnChannel reply, once its checks have passed.
 */
function joinConfig(config: unknown, legacy: boolean): JoinConfig {
  const map = isObject(config) ? config : {};
  const presence = isObject(map.presence) ? map.presence : {};
  let broadcast: JoinConfig["broadcast"];
  try {
    access(access(config, "broadcast"), "replication_ready");
    const given = isObject(map.broadcast) ? map.broadcast : {};
    broadcast = {
      self: flexibleBoolean(given.self),
      ack: flexibleBoolean(given.ack),
      replicationReady: truthy(given.replication_ready),
    };
  } catch (error) {
    if (!(error instanceof AccessRaised)) throw error;
    broadcast = { raised: error.message };
  }
  const changes = map.postgres_changes;
  const given = isObject(map.broadcast) ? map.broadcast : undefined;
  return {
    broadcast,
    replay: given && Object.hasOwn(given, "replay") ? { value: given.replay } : undefined,
    presenceKey: typeof presence.key === "string" ? presence.key : "",
    presenceEnabled: flexibleBoolean(presence.enabled),
    private: flexibleBoolean(map.private),
    postgresChanges: Array.isArray(changes) ? changes.filter(isObject) : [],
    legacy,
  };
}

/** Upstream's FlexibleBoolean, with false for what it refuses (the field's default). */
function flexibleBoolean(value: unknown): boolean {
  if (typeof value === "boolean") return value;
  return typeof value === "string" && value.toLowerCase() === "true";
}

class AccessRaised extends Error {}

/** Elixir 1.18's Access.get on a decoded JSON value with a string key: what it returns or raises. */
function access(container: unknown, key: string): unknown {
  if (container === undefined || container === null) return undefined;
  if (isObject(container)) return container[key];
  if (Array.isArray(container)) {
    throw new AccessRaised(
      `the Access module supports only keyword lists (with atom keys), got: ${JSON.stringify(key)}\n\nIf you want to search lists of tuples, use List.keyfind/3`,
    );
  }
  throw new AccessRaised("no function clause matching in Access.get/3");
}

/** Elixir's truthiness: everything but false and nil (null, or no such key). */
function truthy(value: unknown): boolean {
  return value !== undefined && value !== null && value !== false;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function toBytes(data: Buffer | ArrayBuffer | Buffer[]): Uint8Array {
  if (Array.isArray(data)) return Buffer.concat(data);
  if (data instanceof ArrayBuffer) return new Uint8Array(data);
  return data;
}
