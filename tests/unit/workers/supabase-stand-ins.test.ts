// The Worker build's stand-ins for the Supabase clients it leaves out (vite.config.ts:
// supabaseAuthAndRestOnly). supabase-js builds a Realtime and a Storage client for every client
// and hands Realtime each new access token: that must cost nothing and never fail. Any real use
// must fail in a sentence that says what to change, not with "x is not a function".
// (Every end-to-end test runs the built Worker, so sign-in, refresh and queries go through them.)
import { describe, expect, it } from "vitest";
import {
  FunctionsClient,
  RealtimeClient,
  StorageClient,
} from "../../../workers/unused-supabase-clients";

const REFUSAL = /is not in the Worker build.*SUPABASE_CLIENTS_LEFT_OUT in vite\.config\.ts/;

describe("the Worker's Supabase client stand-ins", () => {
  it("Realtime takes access tokens quietly and refuses a channel", async () => {
    const realtime = new RealtimeClient();
    await expect(realtime.setAuth()).resolves.toBeUndefined();
    expect(() => realtime.channel()).toThrow(/Realtime \(supabase\.channel\)/);
    expect(() => realtime.channel()).toThrow(REFUSAL);
  });

  it("Storage is built (and may be awaited) but refuses any use", async () => {
    const storage = new StorageClient() as StorageClient & { from(bucket: string): unknown };
    await expect(Promise.resolve(storage)).resolves.toBe(storage);
    expect(() => storage.from("avatars")).toThrow(/Storage \(supabase\.storage\.from\)/);
    expect(() => storage.from("avatars")).toThrow(REFUSAL);
  });

  it("Edge Functions refuse to be built", () => {
    expect(() => new FunctionsClient()).toThrow(/Edge Functions \(supabase\.functions\)/);
  });
});
