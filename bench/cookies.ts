// A small cookie jar for one virtual visitor: what it sends in `Cookie`, updated from the
// `Set-Cookie` lines of each response (the app's middleware rotates the session cookies there).

export class CookieJar {
  readonly #cookies = new Map<string, string>();

  /** Sets a cookie; an empty value removes it (as @supabase/ssr clears a cookie). */
  set(name: string, value: string): void {
    if (value) this.#cookies.set(name, value);
    else this.#cookies.delete(name);
  }

  get(name: string): string | undefined {
    return this.#cookies.get(name);
  }

  entries(): { name: string; value: string }[] {
    return [...this.#cookies].map(([name, value]) => ({ name, value }));
  }

  /** The `Cookie` request header. */
  header(): string {
    return [...this.#cookies].map(([name, value]) => `${name}=${value}`).join("; ");
  }

  clone(): CookieJar {
    const copy = new CookieJar();
    for (const [name, value] of this.#cookies) copy.set(name, value);
    return copy;
  }

  /**
   * Applies a response's `Set-Cookie` lines (a cookie with `Max-Age=0`, an `Expires` in the past or
   * an empty value is removed). Returns whether anything changed.
   */
  applySetCookie(lines: readonly string[]): boolean {
    let changed = false;
    for (const line of lines) {
      const [pair = "", ...attributes] = line.split(";");
      const equals = pair.indexOf("=");
      if (equals <= 0) continue;
      const name = pair.slice(0, equals).trim();
      const value = pair.slice(equals + 1).trim();
      const expired = attributes.some((attribute) => {
        const [key = "", raw = ""] = attribute.split("=").map((part) => part.trim());
        if (key.toLowerCase() === "max-age") return Number(raw) <= 0;
        if (key.toLowerCase() === "expires") return Date.parse(raw) <= Date.now();
        return false;
      });
      const next = expired ? "" : value;
      if ((this.#cookies.get(name) ?? "") === next) continue;
      this.set(name, next);
      changed = true;
    }
    return changed;
  }

  /** The session @supabase/ssr stores under `key` (one cookie, or chunks `key.0`, `key.1`, …). */
  readSession(key: string): Record<string, unknown> | null {
    let raw = this.#cookies.get(key);
    if (raw === undefined) {
      const chunks: string[] = [];
      for (let i = 0; this.#cookies.has(`${key}.${i}`); i++)
        chunks.push(this.#cookies.get(`${key}.${i}`) ?? "");
      if (chunks.length === 0) return null;
      raw = chunks.join("");
    }
    const base64 = raw.startsWith("base64-") ? raw.slice("base64-".length) : null;
    const json =
      base64 === null ? decodeURIComponent(raw) : Buffer.from(base64, "base64url").toString("utf8");
    return JSON.parse(json) as Record<string, unknown>;
  }

  /** Stores `session` under `key` as one base64url cookie (as @supabase/ssr encodes it), chunks removed. */
  writeSession(key: string, session: Record<string, unknown>): void {
    for (const name of [...this.#cookies.keys()]) {
      if (name.startsWith(`${key}.`)) this.#cookies.delete(name);
    }
    this.set(key, `base64-${Buffer.from(JSON.stringify(session)).toString("base64url")}`);
  }
}
