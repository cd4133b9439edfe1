/**
 * The address a request came from, decided once by the server (server.ts) and read by Auth
 * (rate limits, audit log, MFA challenges) through clientIp().
 *
 * It is the socket's remote address. A header such as X-Forwarded-For is written by whoever sends
 * the request, so it counts only when the backend is told to trust it (`trustProxyHeader`, for a
 * backend behind a proxy that sets it), as the real service counts GOTRUE_RATE_LIMIT_HEADER only
 * when configured.
 */
const addresses = new WeakMap<Request, string>();

/** Without a socket (the in-process `fetch` of a backend) the caller is this machine. */
const IN_PROCESS = "127.0.0.1";

export function rememberClientAddress(
  request: Request,
  socketAddress: string | undefined,
  trustProxyHeader: string | undefined,
): void {
  const proxied = trustProxyHeader
    ? request.headers.get(trustProxyHeader)?.split(",")[0]?.trim()
    : undefined;
  addresses.set(request, proxied || normalize(socketAddress) || IN_PROCESS);
}

export function clientAddress(request: Request): string {
  return addresses.get(request) ?? IN_PROCESS;
}

/** An IPv4 peer on a dual-stack socket shows as ::ffff:a.b.c.d; the plain form is the address. */
function normalize(address: string | undefined): string | undefined {
  return address?.replace(/^::ffff:(\d+\.\d+\.\d+\.\d+)$/i, "$1");
}
