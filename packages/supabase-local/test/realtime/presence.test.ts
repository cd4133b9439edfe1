// Presence through supabase-js: track and untrack, presence_state at the join and presence_diff
// after, and a channel that leaves is gone for the others. (Private topics: private.test.ts.)
import { createClient, type RealtimeChannel, type SupabaseClient } from "@supabase/supabase-js";
import { afterEach, describe, expect, it } from "vitest";
import { BACKEND_URL, PUBLISHABLE_KEY } from "../../../../tests/support/backend.ts";
import { anonClients, subscribed } from "./support.ts";

const client = anonClients();

/** Who is on the channel, as the client's presence state has it: key -> the names tracked. */
function who(channel: RealtimeChannel): Record<string, unknown[]> {
  return Object.fromEntries(
    Object.entries(channel.presenceState()).map(([key, metas]) => [
      key,
      (metas as Array<{ name?: unknown }>).map((m) => m.name),
    ]),
  );
}

describe("presence", () => {
  it("track, presence_state for a later joiner, untrack and leaving, on both serializers", async () => {
    const topic = `room-${crypto.randomUUID()}`;
    const ada = client().channel(topic, { config: { presence: { key: "ada" } } });
    const joined: string[] = [];
    const left: string[] = [];
    ada
      .on("presence", { event: "join" }, ({ key }) => joined.push(key))
      .on("presence", { event: "leave" }, ({ key }) => left.push(key));
    await subscribed(ada);
    expect(await ada.track({ name: "Ada" })).toBe("ok");
    await expect.poll(() => who(ada)).toEqual({ ada: ["Ada"] });

    // a later joiner gets the state at its join
    const grace = client("1.0.0").channel(topic, { config: { presence: { key: "grace" } } });
    grace.on("presence", { event: "sync" }, () => {});
    await subscribed(grace);
    await expect.poll(() => who(grace)).toEqual({ ada: ["Ada"] });
    expect(await grace.track({ name: "Grace" })).toBe("ok");
    await expect.poll(() => who(ada)).toEqual({ ada: ["Ada"], grace: ["Grace"] });
    // a second track replaces the first
    expect(await grace.track({ name: "Grace H." })).toBe("ok");
    await expect.poll(() => who(ada)).toEqual({ ada: ["Ada"], grace: ["Grace H."] });
    expect(await grace.untrack()).toBe("ok");
    await expect.poll(() => who(ada)).toEqual({ ada: ["Ada"] });
    expect(await grace.track({ name: "Grace" })).toBe("ok");
    await expect.poll(() => who(ada)).toEqual({ ada: ["Ada"], grace: ["Grace"] });
    // leaving the channel takes its presence with it
    await grace.unsubscribe();
    await expect.poll(() => who(ada)).toEqual({ ada: ["Ada"] });
    expect(joined).toContain("grace");
    expect(left).toContain("grace");
  });
});
