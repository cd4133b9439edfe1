/**
 * The enrollment QR code as an `<img src>`: supabase-js hands over the server's SVG as
 * `data:image/svg+xml;utf-8,<svg…>`, whose raw `#` and quotes can break a data URL. It is
 * re-encoded as `data:image/svg+xml,<percent-encoded svg>` (allowed by the CSP's `img-src data:`).
 * Anything that is not an SVG gives "" (the secret is shown for manual entry either way).
 */
export function totpQrCode(qr: string | undefined | null): string {
  if (!qr) return "";
  const comma = qr.indexOf(",");
  if (!qr.startsWith("data:image/svg+xml") || comma < 0) {
    return qr.trimStart().startsWith("<svg") ? encodeSvg(qr) : "";
  }
  const meta = qr.slice(0, comma);
  let body = qr.slice(comma + 1);
  if (meta.endsWith(";base64")) {
    try {
      body = atob(body);
    } catch {
      return "";
    }
  } else if (/%[0-9A-Fa-f]{2}/.test(body) && !body.includes("<")) {
    try {
      body = decodeURIComponent(body);
    } catch {
      return "";
    }
  }
  const start = body.trimStart();
  return start.startsWith("<svg") || start.startsWith("<?xml") ? encodeSvg(body) : "";
}

function encodeSvg(svg: string): string {
  return `data:image/svg+xml,${encodeURIComponent(svg)}`;
}

/** "JBSWY3DPEHPK3PXP" -> "JBSW Y3DP EHPK 3PXP", easier to type into an app. */
export function groupSecret(secret: string): string {
  return secret.replace(/(.{4})(?=.)/g, "$1 ");
}
