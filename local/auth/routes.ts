import type { Handler } from "./index.ts";

/** The endpoint table: method, path (relative to /auth/v1), handler. */
export const routes: Array<[string, string, Handler]> = [];
