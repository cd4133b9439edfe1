// The tenant limits, as upstream's Realtime counts them (v2.102.1): a RateCounter per limit that
// buckets what was counted every tick (5 s), keeps the last 12 buckets and is "triggered" while
// their average per second is at or over the limit; the concurrent users (sockets that joined a
// channel); a client's presence calls per window. Each refusal's words are upstream's, and are
// written where the refusal happens (socket.ts, http-broadcast.ts).
import type { RealtimeSettings } from "../project/config.ts";

/**
 * Upstream's rate counters (Tenants.*_per_second_rate): what is counted goes into the current
 * bucket; at each tick the bucket is kept (the last 12), the average per second over them is
 * taken, and the counter is triggered while that average is at or over the limit. The ticks are
 * worked out when the counter is used, so no timer outlives the backend.
 */
export class RateCounter {
  readonly limit: number;
  readonly #tickMs: number;
  #count = 0;
  #buckets: number[] = [];
  #nextTick: number;
  #avg = 0;
  #triggered = false;

  constructor(limit: number, tickMs: number, now = Date.now()) {
    this.limit = limit;
    this.#tickMs = tickMs;
    this.#nextTick = now + tickMs;
  }

  add(n = 1): void {
    this.#roll();
    this.#count += n;
  }

  /** The average per second over the kept buckets, as of the last tick. */
  get avg(): number {
    this.#roll();
    return this.#avg;
  }

  /** Whether the average reached the limit at a tick (and has not fallen under it since). */
  get triggered(): boolean {
    this.#roll();
    return this.#triggered;
  }

  #roll(now = Date.now()): void {
    while (now >= this.#nextTick) {
      this.#buckets.unshift(this.#count);
      this.#count = 0;
      if (this.#buckets.length > 12) this.#buckets.pop();
      const sum = this.#buckets.reduce((a, b) => a + b, 0);
      this.#avg = sum / this.#buckets.length / (this.#tickMs / 1000);
      // reached: triggered; fallen under: no longer (upstream's maybe_trigger_limit)
      this.#triggered = this.#avg >= this.limit;
      this.#nextTick += this.#tickMs;
      // a long quiet spell: twelve empty buckets say all there is to say
      if (sum === 0 && now - this.#nextTick > 12 * this.#tickMs) {
        this.#nextTick += Math.floor((now - this.#nextTick) / this.#tickMs) * this.#tickMs;
      }
    }
  }
}

/** One backend's limits and counters (upstream's are per tenant: one project here). */
export class Limits {
  readonly settings: RealtimeSettings;
  readonly joins: RateCounter;
  readonly events: RateCounter;
  /** postgres_changes deliveries (upstream's db_events counter, fan-out counted). */
  readonly dbEvents: RateCounter;
  readonly presence: RateCounter;
  /** The sockets that joined a channel: upstream's UsersCounter. */
  readonly #users = new Set<object>();

  constructor(settings: RealtimeSettings) {
    this.settings = settings;
    const tick = settings.rateCounterTickMs;
    this.joins = new RateCounter(settings.maxJoinsPerSecond, tick);
    this.events = new RateCounter(settings.maxEventsPerSecond, tick);
    this.dbEvents = new RateCounter(settings.maxEventsPerSecond, tick);
    this.presence = new RateCounter(settings.maxPresenceEventsPerSecond, tick);
  }

  /** Upstream's limit_max_users: a socket not yet counted is refused once the count is reached. */
  userRefused(socket: object): boolean {
    return !this.#users.has(socket) && this.#users.size >= this.settings.maxConcurrentUsers;
  }

  /** Upstream's TenantRateLimiters.check_tenant at connect: users at the limit, or joins over it. */
  /** Why a new socket is refused, in upstream's words (TenantRateLimiters), if it is. */
  connectRefusal(): string | undefined {
    if (this.#users.size >= this.settings.maxConcurrentUsers) return "Too many connected users";
    if (this.joins.triggered) return "Too many joins per second";
    return undefined;
  }

  userJoined(socket: object): void {
    this.#users.add(socket);
  }

  userLeft(socket: object): void {
    this.#users.delete(socket);
  }

  /** Upstream's validate_payload_size: max_payload_size_in_kb * 1000 plus 500 bytes of padding. */
  payloadTooLarge(bytes: number): boolean {
    return bytes > this.settings.maxPayloadSizeInKb * 1000 + 500;
  }
}

/** A client's presence calls in a window (upstream's limit_client_presence_event), per channel. */
export class ClientPresenceWindow {
  #count = 0;
  #resetAt: number | undefined;

  readonly maxCalls: number;
  readonly windowMs: number;

  constructor(maxCalls: number, windowMs: number) {
    this.maxCalls = maxCalls;
    this.windowMs = windowMs;
  }

  /** Counts a call; false once the window's calls are spent. */
  allow(now = Date.now()): boolean {
    if (this.#resetAt === undefined || now > this.#resetAt) {
      this.#count = 1;
      this.#resetAt = now + this.windowMs;
      return true;
    }
    if (this.#count >= this.maxCalls) return false;
    this.#count++;
    return true;
  }
}
