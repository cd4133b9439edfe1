import { isIP } from "node:net";

/**
 * Where a request comes from, in two steps. The server (backend.ts) knows the peer: the socket's
 * remote address, or a proxy header when the backend is told to trust one (`trustProxyHeader`).
 * A header such as X-Forwarded-For is written by whoever sends the request, so it counts only
 * then, as the real service counts GOTRUE_RATE_LIMIT_HEADER only when configured. The gateway
 * (gateway.ts) then decides the client address once per request, `Sb-Forwarded-For` included,
 * and hands it to Auth in the request's context (rate limits, audit log, MFA challenges).
 */

/** Without a socket (the in-process `fetch` of a backend) the caller is this machine. */
export const IN_PROCESS = "127.0.0.1";

export function peerAddress(
  request: Request,
  socketAddress: string | undefined,
  trustProxyHeader: string | undefined,
): string {
  const proxied = trustProxyHeader
    ? request.headers.get(trustProxyHeader)?.split(",")[0]?.trim()
    : undefined;
  return proxied || normalize(socketAddress) || IN_PROCESS;
}

/** An IPv4 peer on a dual-stack socket shows as ::ffff:a.b.c.d; the plain form is the address. */
function normalize(address: string | undefined): string | undefined {
  return address?.replace(/^::ffff:(\d+\.\d+\.\d+\.\d+)$/i, "$1");
}

/**
 * The address an `Sb-Forwarded-For` value names, as Auth reads it (internal/sbff): the leftmost
 * comma-separated value, trimmed, which must parse as an IP address (Go's net.ParseIP: no port,
 * no brackets, no zone), in Go's canonical form (an IPv4-mapped IPv6 address is its IPv4 one).
 * Anything else is undefined: the header is ignored and the request counts by its own address.
 */
export function sbForwardedFor(value: string | null): string | undefined {
  const first = value?.split(",")[0]?.trim();
  if (!first || first.includes("%")) return undefined;
  const version = isIP(first);
  if (version === 4) return first;
  if (version !== 6) return undefined;
  // the WHATWG URL parser writes IPv6 as RFC 5952 does, and as Go's IP.String does
  const canonical = new URL(`http://[${first}]`).hostname.slice(1, -1);
  const mapped = /^::ffff:([0-9a-f]{1,4}):([0-9a-f]{1,4})$/.exec(canonical);
  if (!mapped) return canonical;
  const [high, low] = [
    Number.parseInt(mapped[1] as string, 16),
    Number.parseInt(mapped[2] as string, 16),
  ];
  return [high >> 8, high & 255, low >> 8, low & 255].join(".");
}
