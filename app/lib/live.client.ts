import type { RealtimeChannel } from "@supabase/supabase-js";
import { avatarPathOf } from "./avatars";
import type { PublicEnv } from "./public-env";
import { getBrowserSupabase } from "./supabase.client";

/**
 * The browser's side of live data (loaded by use-live.ts once the page is idle, never in the first
 * load or the Worker): private Realtime channels on the topics the database broadcasts to
 * (`user:<id>`, `note:<id>`: supabase/migrations/20261128000100_live_notes.sql), joined with the
 * signed-in user's token from the browser Supabase client. supabase-js hands Realtime each
 * refreshed token (realtime.setAuth, also at every heartbeat), and realtime-js reconnects a
 * dropped socket and rejoins its channels. Each join is reported as a change, since messages sent
 * before it are lost to it. Messages carry ids only: listeners re-read through the data API.
 *
 * Several parts of a page (and the next page, while navigating) may listen to one topic: each
 * topic is one channel, left a moment after its last listener goes.
 */

/** Someone on a topic, as their browser announced themselves (see presenceViewers). */
export interface Viewer {
  name: string;
  /** Their picture in the avatars bucket: only ever a path in their own folder, or null. */
  avatarPath: string | null;
}

export interface Presence {
  /** What the others see: a display name and a picture (client-asserted, so they check both). */
  me: Viewer;
  /** Everyone else on the topic (see presenceViewers). */
  onSync(others: Viewer[]): void;
}

export interface Listener {
  /** Something changed (a message's payload), or may have (after a join or a rejoin: null). */
  onChange(payload: Record<string, unknown> | null): void;
  presence?: Presence;
}

interface Entry {
  /** Made once the topic's previous channel (if any) has left: realtime-js keys them by topic. */
  channel?: RealtimeChannel;
  /** The signed-in user: the presence key, so a person is one entry whatever their tabs. */
  userId: string;
  listeners: Set<Listener>;
  /** Made with a presence listener bound (realtime-js allows it only before the join). */
  withPresence: boolean;
  leaving?: ReturnType<typeof setTimeout>;
}

/** How long a channel nobody listens to stays joined (a navigation to a page that wants it). */
const LINGER_MS = 3000;
/** The most of a presence name a page shows. */
export const NAME_MAX = 40;

const topics = new Map<string, Entry>();
/** Channels on their way out, by topic: the next channel of a topic waits for its leave. */
const removing = new Map<string, Promise<unknown>>();

/** What listen() hands back: stop, and announce a new name or picture without leaving. */
export interface Listening {
  stop(): void;
  /** The reader's name or picture changed (their profile, on another page): tracked again. */
  rename(me: Viewer): void;
}

/** Starts listening to a private topic as `userId`. */
export function listen(
  env: PublicEnv,
  topic: string,
  userId: string,
  listener: Listener,
): Listening {
  let entry = topics.get(topic);
  // Another account signed in meanwhile, or presence wanted where the channel was made without
  // it: the channel is made again.
  if (entry && (entry.userId !== userId || (listener.presence && !entry.withPresence))) {
    const same = entry.userId === userId;
    const withPresence = Boolean(listener.presence) || (same && entry.withPresence);
    leave(env, topic, entry);
    entry = join(env, topic, userId, withPresence, same ? entry.listeners : new Set());
  }
  entry ??= join(env, topic, userId, Boolean(listener.presence), new Set());
  const current = entry;
  clearTimeout(current.leaving);
  current.listeners.add(listener);
  if (listener.presence) {
    if (current.channel?.state === "joined") {
      void current.channel.track(announced(listener.presence.me));
    }
    listener.presence.onSync(othersOn(current));
  }
  return {
    stop() {
      current.listeners.delete(listener);
      if (listener.presence && ![...current.listeners].some((l) => l.presence)) {
        void current.channel?.untrack();
      }
      if (current.listeners.size > 0) return;
      current.leaving = setTimeout(() => leave(env, topic, current), LINGER_MS);
    },
    rename(me) {
      const { presence } = listener;
      if (!presence || (presence.me.name === me.name && presence.me.avatarPath === me.avatarPath)) {
        return;
      }
      presence.me = me;
      // a second track replaces the first: the others' sync shows the new name, nobody leaves
      if (current.channel?.state === "joined") void current.channel.track(announced(me));
    },
  };
}

function leave(env: PublicEnv, topic: string, entry: Entry) {
  clearTimeout(entry.leaving);
  if (topics.get(topic) === entry) topics.delete(topic);
  const { channel } = entry;
  if (!channel) return;
  const gone = getBrowserSupabase(env)
    .removeChannel(channel)
    .finally(() => {
      if (removing.get(topic) === gone) removing.delete(topic);
    });
  removing.set(topic, gone);
}

function join(
  env: PublicEnv,
  topic: string,
  userId: string,
  withPresence: boolean,
  listeners: Set<Listener>,
): Entry {
  const entry: Entry = { userId, listeners, withPresence };
  topics.set(topic, entry);
  const supabase = getBrowserSupabase(env);
  // The topic's previous channel gone, then the token (the join carries it), then the join.
  void (removing.get(topic) ?? Promise.resolve())
    .then(() => supabase.realtime.setAuth())
    .catch(() => {})
    .then(() => {
      if (topics.get(topic) !== entry) return;
      const channel = supabase.channel(topic, {
        config: { private: true, presence: { key: userId } },
      });
      entry.channel = channel;
      channel.on("broadcast", { event: "*" }, (message) => {
        const payload = (message.payload ?? {}) as Record<string, unknown>;
        for (const listener of entry.listeners) listener.onChange(payload);
      });
      if (withPresence) {
        channel.on("presence", { event: "sync" }, () => {
          const others = othersOn(entry);
          for (const { presence } of entry.listeners) presence?.onSync(others);
        });
      }
      // Every join is a change, the first included: what was said before it (between the page's
      // read and this join, or while a dropped socket was away) never reaches this channel.
      // Subscribe, then read: realtime-js rejoins by itself after a drop or a closed channel.
      channel.subscribe((status) => {
        if (status !== "SUBSCRIBED") return;
        const present = [...entry.listeners].find((listener) => listener.presence);
        if (present?.presence) void channel.track(announced(present.presence.me));
        for (const listener of entry.listeners) listener.onChange(null);
      });
    });
  return entry;
}

/** What this browser announces on a topic. */
const announced = (me: Viewer) => ({ name: me.name, avatar: me.avatarPath });

function othersOn(entry: Entry): Viewer[] {
  const state = entry.channel?.presenceState<{ name?: unknown; avatar?: unknown }>() ?? {};
  return presenceViewers(
    Object.entries(state)
      .filter(([key]) => key !== entry.userId)
      .map(([key, metas]) => ({ key, name: metas[0]?.name, avatar: metas[0]?.avatar })),
  );
}

/**
 * The others on a topic from what their browsers sent: each name as presenceNames makes it, and
 * a picture only when it is a path in the folder of the user id the entry is keyed by (the
 * bucket's shape), so an announcement cannot show a file from anywhere else.
 */
export function presenceViewers(
  entries: { key: string; name: unknown; avatar: unknown }[],
): Viewer[] {
  const names = presenceNames(entries.map((e) => e.name));
  return entries.map((e, i) => ({
    name: names[i] ?? "Someone",
    avatarPath: avatarPathOf(e.key, e.avatar),
  }));
}

/**
 * Presence payloads are whatever the other browser sent: each becomes plain text (no control
 * characters, whitespace collapsed) of at most NAME_MAX characters, "Someone" when empty, and is
 * only ever rendered as text.
 */
export function presenceNames(values: unknown[]): string[] {
  return values.map((value) => {
    const text = (typeof value === "string" ? value : "")
      .replace(/[\p{Cc}\p{Cf}\p{Zl}\p{Zp}]/gu, " ")
      .replace(/\s+/g, " ")
      .trim();
    if (!text) return "Someone";
    const chars = [...text];
    return chars.length > NAME_MAX ? `${chars.slice(0, NAME_MAX - 1).join("")}…` : text;
  });
}
