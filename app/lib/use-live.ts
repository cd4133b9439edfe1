import { useEffect, useRef, useState } from "react";
import { useRevalidator, useRouteLoaderData } from "react-router";
import type { Listener, Listening, Viewer } from "./live.client";
import type { PublicEnv } from "./public-env";
import type { SessionUser } from "./session-user";

/**
 * Live data on a page: listens to a private Realtime topic once the page is idle (live.client.ts,
 * a chunk of its own, with the Supabase client: never in the first load, never in the Worker),
 * for as long as the page shows it. Signed out, or before hydration (JavaScript off), nothing
 * happens: the page is what the server rendered, and works.
 */
export function useLiveTopic(
  topic: string | null,
  options: {
    /** A message arrived (its payload: ids only), or the channel (re)joined (null). */
    onChange: Listener["onChange"];
    /** Also share presence on the topic as this person; the hook returns the others. */
    presence?: Viewer;
  },
): Viewer[] {
  const root = useRouteLoaderData("root") as { env?: PublicEnv; user?: SessionUser | null };
  const url = root?.env?.SUPABASE_URL;
  const key = root?.env?.SUPABASE_PUBLISHABLE_KEY;
  const userId = root?.user?.id;
  const onChange = useRef(options.onChange);
  onChange.current = options.onChange;
  const presenceName = options.presence?.name;
  const presenceAvatar = options.presence?.avatarPath ?? null;
  const me = useRef(options.presence);
  me.current = options.presence;
  const withPresence = presenceName !== undefined;
  const listening = useRef<Listening | undefined>(undefined);
  const [others, setOthers] = useState<Viewer[]>([]);

  useEffect(() => {
    if (!topic || !url || !key || !userId) return;
    let cancelled = false;
    const start = async () => {
      const live = await import("./live.client");
      if (cancelled) return;
      listening.current = live.listen(
        { SUPABASE_URL: url, SUPABASE_PUBLISHABLE_KEY: key },
        topic,
        userId,
        {
          onChange: (payload) => onChange.current(payload),
          presence:
            withPresence && me.current ? { me: { ...me.current }, onSync: setOthers } : undefined,
        },
      );
    };
    const idle = window.requestIdleCallback ?? ((cb: () => void) => window.setTimeout(cb, 1));
    const cancelIdle = window.cancelIdleCallback ?? window.clearTimeout;
    const handle = idle(() => void start());
    return () => {
      cancelled = true;
      cancelIdle(handle);
      listening.current?.stop();
      listening.current = undefined;
      setOthers([]);
    };
  }, [topic, url, key, userId, withPresence]);

  // A new name or picture (the reader changed their profile; the page re-read): announced on the
  // same channel, without leaving it
  useEffect(() => {
    if (presenceName === undefined) return;
    listening.current?.rename({ name: presenceName, avatarPath: presenceAvatar });
  }, [presenceName, presenceAvatar]);

  return others;
}

/** One re-read for a burst of messages, whichever topics of the page they came on. */
let pending: ReturnType<typeof setTimeout> | undefined;
const REREAD_DELAY_MS = 100;

/**
 * Re-runs the page's loaders (the data API, as the user: RLS decides) when a message on `topic`
 * passes `relevant`, and once the channel has joined (or rejoined): a change made after the page
 * was read and before the join would be missed otherwise. A burst, on any of the page's topics,
 * is one re-read.
 */
export function useLiveRevalidation(
  topic: string | null,
  options: { relevant?: (payload: Record<string, unknown>) => boolean; presence?: Viewer } = {},
): Viewer[] {
  const { revalidate } = useRevalidator();
  const relevant = options.relevant;
  return useLiveTopic(topic, {
    presence: options.presence,
    onChange: (payload) => {
      if (payload && relevant && !relevant(payload)) return;
      clearTimeout(pending);
      pending = setTimeout(() => void revalidate(), REREAD_DELAY_MS);
    },
  });
}
