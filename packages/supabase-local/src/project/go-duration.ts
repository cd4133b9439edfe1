// Go's time.ParseDuration, for the values Auth reads as durations: an admin's ban_duration, and
// config.toml's [auth.sessions] timebox and inactivity_timeout (the CLI hands them to Auth as they
// are written). Its answers and error texts are Go's, as Auth passes them on.

/** Nanoseconds per unit of a Go duration (time.ParseDuration's unitMap). */
const DURATION_UNITS: Record<string, bigint> = {
  ns: 1n,
  us: 1_000n,
  "\u00b5s": 1_000n,
  "\u03bcs": 1_000n,
  ms: 1_000_000n,
  s: 1_000_000_000n,
  m: 60_000_000_000n,
  h: 3_600_000_000_000n,
};
const INT64_LIMIT = 2n ** 63n;

/**
 * time.ParseDuration: an optional sign, then numbers (fractions allowed) each with a unit, within
 * an int64 of nanoseconds; "0" alone needs none. Answers the nanoseconds, or Go's error text.
 */
export function parseGoDuration(orig: string): bigint | string {
  const invalid = `time: invalid duration ${goQuote(orig)}`;
  let s = orig;
  let negative = false;
  if (s[0] === "-" || s[0] === "+") {
    negative = s[0] === "-";
    s = s.slice(1);
  }
  if (s === "0") return 0n;
  if (s === "") return invalid;
  let total = 0n;
  while (s !== "") {
    const number = s.match(/^(\d*)(?:\.(\d*))?/) as RegExpMatchArray;
    const [whole = "", fraction] = [number[1], number[2]];
    if (whole === "" && !fraction) return invalid;
    // Go's leadingInt refuses a number past 2^63
    if (whole !== "" && BigInt(whole) > INT64_LIMIT) return invalid;
    s = s.slice(number[0].length);
    const unitName = s.match(/^[^.0-9]*/)?.[0] ?? "";
    s = s.slice(unitName.length);
    if (unitName === "") return `time: missing unit in duration ${goQuote(orig)}`;
    const unit = DURATION_UNITS[unitName];
    if (unit === undefined) {
      return `time: unknown unit ${goQuote(unitName)} in duration ${goQuote(orig)}`;
    }
    let value = BigInt(whole || "0");
    if (value > INT64_LIMIT / unit) return invalid;
    value *= unit;
    if (fraction) {
      // as Go: the digits that fit an int64, scaled in float64
      let f = 0n;
      let scale = 1;
      for (const digit of fraction) {
        const next = f * 10n + BigInt(digit);
        if (f > (INT64_LIMIT - 1n) / 10n || next > INT64_LIMIT) break;
        f = next;
        scale *= 10;
      }
      value += BigInt(Math.trunc(Number(f) * (Number(unit) / scale)));
      if (value > INT64_LIMIT) return invalid;
    }
    total += value;
    if (total > INT64_LIMIT) return invalid;
  }
  if (negative) return -total;
  if (total > INT64_LIMIT - 1n) return invalid;
  return total;
}

/** time's quote: ASCII as is (with \" and \\ escaped), anything else as \x escapes of its bytes. */
function goQuote(s: string): string {
  let out = "";
  for (const c of s) {
    if (c >= " " && c <= "~") out += c === '"' || c === "\\" ? `\\${c}` : c;
    else for (const byte of Buffer.from(c)) out += `\\x${byte.toString(16).padStart(2, "0")}`;
  }
  return `"${out}"`;
}
