import { APP_URL } from "./app.ts";

/** One HTTP response on the way (a redirect hop or the final page). */
export interface Hop {
  status: number;
  url: string;
  headers: Headers;
  location: string | null;
}

export interface Visit extends Hop {
  body: string;
  /** The redirects that led here, in order (each with its own headers, e.g. Set-Cookie). */
  redirects: Hop[];
}

export interface RequestOptions {
  /** Follow redirects like a browser (default true). */
  follow?: boolean;
  /** Origin header for POSTs (default: the app's own origin, as a browser sends it). */
  origin?: string | null;
  headers?: Record<string, string>;
}

/**
 * A browser without JavaScript: a cookie jar for the app's origin, real form posts
 * (urlencoded, with the Origin header a browser sends), redirects followed hop by hop (303 turns a
 * POST into a GET) so each hop's headers can be checked. Links to other origins (the auth server's
 * /verify) are followed too; cookies are only kept for and sent to the app.
 */
export class BrowserLess {
  readonly cookies = new Map<string, string>();
  readonly base: string;

  constructor(base = APP_URL) {
    this.base = base;
  }

  get(path: string, options: RequestOptions = {}): Promise<Visit> {
    return this.#request("GET", path, undefined, options);
  }

  post(path: string, form: Record<string, string>, options: RequestOptions = {}): Promise<Visit> {
    return this.#request("POST", path, new URLSearchParams(form), options);
  }

  /** A multipart form post (a file input), as `<form enctype="multipart/form-data">` sends it. */
  postMultipart(path: string, form: FormData, options: RequestOptions = {}): Promise<Visit> {
    return this.#request("POST", path, form, options);
  }

  /** The Cookie header this browser sends to the app. */
  cookieHeader(): string {
    return [...this.cookies].map(([name, value]) => `${name}=${value}`).join("; ");
  }

  /** Is there a Supabase session cookie (sb-…-auth-token, maybe chunked)? */
  hasSession(): boolean {
    return [...this.cookies.keys()].some((name) => /^sb-.+-auth-token(\.\d+)?$/.test(name));
  }

  async #request(
    method: string,
    path: string,
    body: URLSearchParams | FormData | undefined,
    options: RequestOptions,
  ): Promise<Visit> {
    const redirects: Hop[] = [];
    let url = new URL(path, this.base).toString();
    for (let hops = 0; hops < 10; hops++) {
      const headers = new Headers(options.headers);
      const sameApp = new URL(url).origin === new URL(this.base).origin;
      if (sameApp && this.cookies.size) headers.set("Cookie", this.cookieHeader());
      if (method === "POST") {
        const origin = options.origin === undefined ? new URL(this.base).origin : options.origin;
        if (origin !== null) headers.set("Origin", origin);
      }
      const response = await fetch(url, { method, headers, body, redirect: "manual" });
      if (sameApp) this.#store(response.headers.getSetCookie());
      const hop: Hop = {
        status: response.status,
        url,
        headers: response.headers,
        location: response.headers.get("Location"),
      };
      const follow = options.follow ?? true;
      if (follow && hop.location && response.status >= 300 && response.status < 400) {
        await response.body?.cancel();
        redirects.push(hop);
        url = new URL(hop.location, url).toString();
        if (response.status !== 307 && response.status !== 308) {
          method = "GET";
          body = undefined;
        }
        continue;
      }
      return { ...hop, body: await response.text(), redirects };
    }
    throw new Error(`too many redirects from ${path}`);
  }

  #store(lines: string[]) {
    for (const line of lines) {
      const [pair = "", ...attributes] = line.split(";");
      const eq = pair.indexOf("=");
      const name = pair.slice(0, eq).trim();
      const value = pair.slice(eq + 1).trim();
      const expired = attributes.some((a) => {
        const [key = "", val = ""] = a.trim().split("=");
        if (key.toLowerCase() === "max-age") return Number(val) <= 0;
        if (key.toLowerCase() === "expires") return Date.parse(val) <= Date.now();
        return false;
      });
      if (!value || expired) this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
  }
}

/** The first hop (or the page) whose headers set cookies: where no-store must be. */
export function cookieSettingHops(visit: Visit): Hop[] {
  return [...visit.redirects, visit].filter((hop) => hop.headers.getSetCookie().length > 0);
}
