/** A fresh base64 nonce for one response's inline scripts. */
export function createNonce(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return btoa(String.fromCharCode(...bytes));
}

export interface CspOptions {
  nonce: string;
  /** Supabase project origin: the browser client talks to it directly (and to its Realtime socket). */
  supabaseOrigin: string;
  /** Vite dev server: HMR websocket and injected <style> tags need a looser policy. */
  dev: boolean;
  https: boolean;
}

export function contentSecurityPolicy({ nonce, supabaseOrigin, dev, https }: CspOptions): string {
  const directives: Record<string, string[]> = {
    "default-src": ["'self'"],
    "script-src": ["'self'", `'nonce-${nonce}'`],
    "style-src": dev ? ["'self'", "'unsafe-inline'"] : ["'self'"],
    // data: for the TOTP QR code, blob: for previews, Supabase for attachments (signed URLs).
    "img-src": ["'self'", "data:", "blob:", supabaseOrigin],
    "font-src": ["'self'"],
    // The Supabase API, and its Realtime socket (ws: for http, wss: for https), in every build.
    "connect-src": [
      "'self'",
      supabaseOrigin,
      ...socketOrigin(supabaseOrigin),
      ...(dev ? ["ws:", "wss:"] : []),
    ],
    "frame-ancestors": ["'none'"],
    // The auth server too: a sign-in form (OAuth) answers with a redirect to its /authorize,
    // and browsers apply form-action to the redirects that follow a form submission.
    "form-action": ["'self'", supabaseOrigin],
    "base-uri": ["'none'"],
    "object-src": ["'none'"],
  };
  const policy = Object.entries(directives).map(([name, values]) => `${name} ${values.join(" ")}`);
  if (https) policy.push("upgrade-insecure-requests");
  return policy.join("; ");
}

/** `wss://x.supabase.co` for `https://x.supabase.co` (and ws: for http:); none for `'none'`. */
function socketOrigin(origin: string): string[] {
  if (origin.startsWith("https://")) return [`wss://${origin.slice("https://".length)}`];
  if (origin.startsWith("http://")) return [`ws://${origin.slice("http://".length)}`];
  return [];
}

/**
 * Headers for every response the Worker sends. The CSP goes on HTML documents only (it is what
 * protects the script-readable auth cookies from injected scripts); HSTS only over https.
 */
export function applySecurityHeaders(response: Response, options: CspOptions): Response {
  let result = response;
  try {
    result.headers.set("X-Content-Type-Options", "nosniff");
  } catch {
    result = new Response(response.body, response);
    result.headers.set("X-Content-Type-Options", "nosniff");
  }
  const headers = result.headers;
  headers.set("Referrer-Policy", "strict-origin-when-cross-origin");
  headers.set("X-Frame-Options", "DENY");
  headers.set("Cross-Origin-Opener-Policy", "same-origin");
  headers.set("Permissions-Policy", "camera=(), microphone=(), geolocation=()");
  if (options.https) {
    headers.set("Strict-Transport-Security", "max-age=63072000; includeSubDomains");
  }
  if (headers.get("Content-Type")?.startsWith("text/html")) {
    headers.set("Content-Security-Policy", contentSecurityPolicy(options));
  }
  return result;
}
