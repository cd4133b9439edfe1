// The message a wallet signs to sign in: Sign in with Solana (SIWS) and Sign in with Ethereum
// (EIP-4361), read line by line as Auth reads them (internal/utilities/siws and siwe, one parser
// there per chain, the same rules but for the header, the address, the Chain ID and the errors'
// prefix). A message Auth refuses is refused with its words, which the grant answers as
// 400 validation_failed.
import { parseGoUrl } from "../http/go-url.ts";

export type Chain = "solana" | "ethereum";

export interface SignInMessage {
  raw: string;
  domain: string;
  address: string;
  /** The line after the address and a blank line, when one more blank line follows it. */
  statement: string | undefined;
  /** As written; `scheme`, `host` (with its port) and `hostname` as Go's net/url reads them. */
  uri: { raw: string; scheme: string; host: string; hostname: string };
  version: string;
  chainId: string;
  nonce: string;
  issuedAt: Date;
  expirationTime: Date | undefined;
  notBefore: Date | undefined;
  requestId: string | undefined;
  resources: string[];
}

export class MessageError extends Error {}

const CHAINS = {
  solana: {
    prefix: "siws",
    header: " wants you to sign in with your Solana account:",
    address: /^[a-zA-Z0-9]{32,44}$/,
    badAddress: "wallet address is not in base58 format",
    // siws.IsValidSolanaNetwork; an empty Chain ID is allowed
    chainId: (value: string) => value === "" || /^solana:(main|dev|test|local)net$/.test(value),
  },
  ethereum: {
    prefix: "siwe",
    header: " wants you to sign in with your Ethereum account:",
    address: /^0x[a-fA-F0-9]{40}$/,
    badAddress: "wallet address is not a valid Ethereum address",
    // EIP-155: a positive integer, as strconv.Atoi reads it (64 bits)
    chainId: (value: string) =>
      /^[+-]?[0-9]+$/.test(value) && BigInt(value) > 0n && BigInt(value) <= 2n ** 63n - 1n,
  },
} as const;

const DOMAIN =
  /^(localhost|(?:[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?\.)+[a-zA-Z]{2,})(?::\d{1,5})?$/;

/** Reads a sign-in message for `chain`, or throws a MessageError with Auth's words. */
export function parseSignInMessage(raw: string, chain: Chain): SignInMessage {
  const rules = CHAINS[chain];
  const refuse = (text: string) => new MessageError(`${rules.prefix}: ${text}`);
  const lines = raw.split("\n");
  if (lines.length < 6) throw refuse("message needs at least 6 lines");
  const header = lines[0] as string;
  if (!header.endsWith(rules.header)) {
    throw refuse(`message first line does not end in "${rules.header}"`);
  }
  const domain = header.slice(0, -rules.header.length).trim();
  if (!DOMAIN.test(domain)) throw refuse("domain in first line of message is not valid");
  const address = (lines[1] as string).trim();
  if (!rules.address.test(address)) throw refuse(rules.badAddress);
  if (lines[2] !== "") throw refuse("third line must be empty");

  const message: Partial<SignInMessage> & { resources: string[] } = {
    raw,
    domain,
    address,
    statement: undefined,
    chainId: "",
    nonce: "",
    version: "",
    resources: [],
  };
  let start = 3;
  if (lines[3] !== "" && lines[4] === "") {
    message.statement = lines[3];
    start = 5;
  }
  let inResources = false;
  for (let i = start; i < lines.length; i++) {
    const line = (lines[i] as string).trim();
    if (inResources) {
      if (line.startsWith("- ")) {
        const resource = line.slice(2).trim();
        if (!requestUri(resource)) {
          throw refuse(`Resource at position ${message.resources.length} has invalid URI`);
        }
        message.resources.push(resource);
        continue;
      }
      inResources = false;
    }
    if (line === "Resources:") {
      inResources = true;
      continue;
    }
    if (line === "") continue;
    const colon = line.indexOf(":");
    if (colon < 0) throw refuse(`encountered unparsable line at index ${i}`);
    const key = line.slice(0, colon);
    const value = line.slice(colon + 1).trim();
    switch (key) {
      case "URI": {
        const uri = requestUri(value);
        if (!uri) throw refuse("URI is not valid");
        message.uri = { raw: value, ...uri };
        break;
      }
      case "Version":
        message.version = value;
        break;
      case "Chain ID":
        if (!rules.chainId(value)) throw refuse("Chain ID is not valid");
        message.chainId = value;
        break;
      case "Nonce":
        message.nonce = value;
        break;
      case "Issued At": {
        const issuedAt = timestamp(value, refuse("Issued At is not a valid ISO8601 timestamp"));
        // Go's zero time is no time: the SIWE parser says so at once, the SIWS one at the end
        if (issuedAt.getTime() === GO_ZERO_TIME && chain === "ethereum") {
          throw refuse("Issued At is not specified");
        }
        message.issuedAt = issuedAt.getTime() === GO_ZERO_TIME ? undefined : issuedAt;
        break;
      }
      case "Expiration Time":
        message.expirationTime = timestamp(
          value,
          refuse("Expiration Time is not a valid ISO8601 timestamp"),
        );
        break;
      case "Not Before":
        message.notBefore = timestamp(value, refuse("Not Before is not a valid ISO8601 timestamp"));
        break;
      case "Request ID":
        message.requestId = value;
        break;
    }
  }
  if (message.version !== "1") {
    throw refuse(
      `Version value is not supported, expected 1 got ${goQuote(message.version ?? "")}`,
    );
  }
  if (!message.issuedAt) throw refuse("Issued At is not specified");
  if (!message.uri) throw refuse("URI is not specified");
  const { issuedAt, expirationTime, notBefore } = message;
  if (expirationTime && issuedAt > expirationTime) {
    throw refuse("Issued At is after Expiration Time");
  }
  if (notBefore && expirationTime && notBefore > expirationTime) {
    throw refuse("Not Before is after Expiration Time");
  }
  return message as SignInMessage;
}

/**
 * Go's url.ParseRequestURI: an absolute URI, or an absolute path; null where it errs. Only what the
 * grant reads is returned.
 */
function requestUri(value: string): { scheme: string; host: string; hostname: string } | null {
  const scheme = value.match(/^([a-zA-Z][a-zA-Z0-9+.-]*):(.*)$/);
  // no scheme: a path, which must be absolute (and has no host, even after "//")
  if (!scheme) {
    // Go refuses control characters and a "%" that does not start an escape
    const path = value.split("?")[0] as string;
    return value.startsWith("/") &&
      !/[\u0000-\u001f\u007f]/.test(value) &&
      !/%(?![0-9a-fA-F]{2})/.test(path)
      ? { scheme: "", host: "", hostname: "" }
      : null;
  }
  // a scheme: what follows must be a path or an authority
  if (!(scheme[2] as string).startsWith("/")) return null;
  const parsed = parseGoUrl(value);
  return parsed && { scheme: parsed.scheme, host: parsed.host, hostname: parsed.hostname };
}

/**
 * Go's time.Parse with RFC 3339 (fractional seconds allowed), which the parsers try: a date, "T",
 * a time and a zone ("Z" or ±hh:mm), each field in its range.
 */
function timestamp(value: string, error: MessageError): Date {
  const match = value.match(
    /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(\.\d{1,9})?(Z|([+-])(\d{2}):(\d{2}))$/,
  );
  if (!match) throw error;
  const [, y, mo, d, h, mi, s, fraction = "", , sign, zh = "0", zm = "0"] = match;
  const year = Number(y);
  const month = Number(mo);
  const day = Number(d);
  const daysInMonth = new Date(Date.UTC(year, month, 0)).getUTCDate();
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth) throw error;
  if (Number(h) > 23 || Number(mi) > 59 || Number(s) > 59) throw error;
  if (Number(zh) > 23 || Number(zm) > 59) throw error;
  const offset = (sign === "-" ? -1 : 1) * (Number(zh) * 60 + Number(zm)) * 60_000;
  const ms = Math.floor(Number(`0${fraction || ".0"}`) * 1000);
  const date = new Date(0);
  // setUTCFullYear, not Date.UTC: years 0 to 99 are not 1900 and on
  date.setUTCFullYear(year, month - 1, day);
  date.setUTCHours(Number(h), Number(mi), Number(s), ms);
  return new Date(date.getTime() - offset);
}

/** Go's zero time.Time, 0001-01-01T00:00:00Z, as a JavaScript time. */
const GO_ZERO_TIME = new Date("0001-01-01T00:00:00Z").getTime();

/** Go's %q of a string, for the version in the error (printable ASCII as is). */
function goQuote(value: string): string {
  return JSON.stringify(value);
}
