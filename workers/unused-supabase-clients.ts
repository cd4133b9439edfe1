// What the Worker build bundles in place of @supabase/realtime-js, @supabase/storage-js and
// @supabase/functions-js (vite.config.ts: supabaseAuthAndRestOnly). The Worker uses supabase-js
// for Auth and the REST API only, but supabase-js builds a Realtime and a Storage client in its
// constructor, once per request here. These stand-ins are built for nothing and answer any use
// with a sentence that says what to change. The browser keeps the real clients.

function leftOut(what: string): Error {
  return new Error(
    `${what} is not in the Worker build, which has Supabase Auth and the REST API only: remove its package from SUPABASE_CLIENTS_LEFT_OUT in vite.config.ts to use it on the server.`,
  );
}

/** supabase-js hands every new access token to Realtime; with no channel there is nothing to do. */
export class RealtimeClient {
  setAuth(): Promise<void> {
    return Promise.resolve();
  }
  channel(): never {
    throw leftOut("Realtime (supabase.channel)");
  }
  getChannels(): never {
    throw leftOut("Realtime (supabase.getChannels)");
  }
  removeChannel(): never {
    throw leftOut("Realtime (supabase.removeChannel)");
  }
  removeAllChannels(): never {
    throw leftOut("Realtime (supabase.removeAllChannels)");
  }
}

export class StorageClient {
  constructor() {
    // Any property read is a use: `supabase.storage.from(...)` says why instead of "not a function".
    // (`then` stays undefined, so awaiting the client does not throw.)
    return new Proxy(this, {
      get(_target, property) {
        if (typeof property === "symbol" || property === "then") return undefined;
        throw leftOut(`Storage (supabase.storage.${property})`);
      },
    });
  }
}

export class StorageApiError extends Error {}

export class FunctionsClient {
  constructor() {
    throw leftOut("Edge Functions (supabase.functions)");
  }
}

// supabase-js re-exports these from @supabase/functions-js.
export class FunctionsError extends Error {}
export class FunctionsFetchError extends FunctionsError {}
export class FunctionsHttpError extends FunctionsError {}
export class FunctionsRelayError extends FunctionsError {}
export const FunctionRegion = {};
