// An upload's X-Robots-Tag, as upstream checks it (storage/validators/x-robots-tag.ts, after MDN's
// list): comma-separated rules, each a simple one (all, noindex, nofollow, none, nosnippet,
// indexifembedded, notranslate, noimageindex), a parametric one (max-snippet: <n >= 0>,
// max-image-preview: none|standard|large, max-video-preview: <n >= -1>, unavailable_after:
// <a date, commas and all>), or `<user agent>: <rules>`. An invalid one refuses the upload with
// upstream's detail; a stored one is sent back only while it still passes, `none` otherwise.
//
// Upstream's quirks are kept, since a value that passes there must pass here and fail alike: a
// number is read as parseInt reads it ("10px" is 10), the user agent is any text, and an
// unavailable_after rule is cut from the rest as `unavailable_after: <date>` with one space, so a
// value spaced otherwise is cut one character off (and usually refused).
import { ERRORS } from "./errors.ts";

const SIMPLE = [
  "all",
  "noindex",
  "nofollow",
  "none",
  "nosnippet",
  "indexifembedded",
  "notranslate",
  "noimageindex",
];
const PARAMETRIC = ["max-snippet", "max-image-preview", "max-video-preview", "unavailable_after"];
const IMAGE_PREVIEW = ["none", "standard", "large"];

const PARAMETRIC_RULE = new RegExp(`^(${PARAMETRIC.join("|")}):\\s*(.*)$`);
/** Where an unavailable_after date ends: a comma before a known rule or an `agent:`, or the end. */
const DATE_END = new RegExp(
  `unavailable_after:\\s*(.+?)(?:,\\s*(?:${[...SIMPLE, ...PARAMETRIC].join("|")}|[a-zA-Z0-9_-]+:)|$)`,
);

/** Throws upstream's InvalidXRobotsTag unless `value` is a valid X-Robots-Tag. */
export function mustBeValidXRobotsTag(value: string): void {
  const trimmed = value.trim();
  if (!trimmed)
    throw ERRORS.invalidXRobotsTag("X-Robots-Tag header value must be a non-empty string");
  for (const rule of rules(trimmed)) {
    if (!rule) throw ERRORS.invalidXRobotsTag("X-Robots-Tag header contains empty rule");
    const parametric = PARAMETRIC_RULE.exec(rule);
    if (parametric) {
      mustBeValidParameter(parametric[1] as string, (parametric[2] as string).trim());
      continue;
    }
    if (SIMPLE.includes(rule)) continue;
    const colon = rule.indexOf(":");
    if (colon === -1) throw ERRORS.invalidXRobotsTag(`Invalid X-Robots-Tag rule: "${rule}"`);
    const agent = rule.slice(0, colon).trim();
    const agentRules = rule.slice(colon + 1).trim();
    if (!agentRules)
      throw ERRORS.invalidXRobotsTag(`X-Robots-Tag user agent "${agent}" has no rules specified`);
    mustBeValidXRobotsTag(agentRules);
  }
}

/** The X-Robots-Tag an object is served with: its stored one while valid, else upstream's none. */
export function servedXRobotsTag(stored: unknown): string {
  // (a value written into the table by hand could hold what no header may: never sent)
  if (typeof stored !== "string" || !stored || /[\0-\x1f\x7f]/.test(stored)) return "none";
  try {
    mustBeValidXRobotsTag(stored);
    return stored;
  } catch {
    return "none";
  }
}

/** The value's rules: split at commas, except inside an unavailable_after date. */
function rules(value: string): string[] {
  const found: string[] = [];
  let rest = value.trim();
  while (rest) {
    const date = rest.startsWith("unavailable_after:") ? DATE_END.exec(rest) : null;
    if (date) {
      const rule = `unavailable_after: ${(date[1] as string).trim()}`;
      found.push(rule);
      rest = rest.slice(rule.length).replace(/^,\s*/, "");
    } else if (rest.startsWith("unavailable_after:")) {
      // no date at all: the rule as it stands (refused for want of a value)
      found.push(rest);
      rest = "";
    } else {
      const comma = rest.indexOf(",");
      found.push((comma === -1 ? rest : rest.slice(0, comma)).trim());
      rest = comma === -1 ? "" : rest.slice(comma + 1);
    }
    rest = rest.trim();
  }
  return found;
}

function mustBeValidParameter(name: string, value: string): void {
  if (!value) throw ERRORS.invalidXRobotsTag(`X-Robots-Tag rule "${name}" requires a value`);
  const number = Number.parseInt(value, 10);
  if (name === "max-snippet" && !(number >= 0))
    throw ERRORS.invalidXRobotsTag(
      `X-Robots-Tag "max-snippet" value must be a non-negative number, got: "${value}"`,
    );
  if (name === "max-image-preview" && !IMAGE_PREVIEW.includes(value))
    throw ERRORS.invalidXRobotsTag(
      `X-Robots-Tag "max-image-preview" value must be one of: none, standard, large, got: "${value}"`,
    );
  if (name === "max-video-preview" && !(number >= -1))
    throw ERRORS.invalidXRobotsTag(
      `X-Robots-Tag "max-video-preview" value must be a number >= -1, got: "${value}"`,
    );
  if (name === "unavailable_after" && Number.isNaN(new Date(value).getTime()))
    throw ERRORS.invalidXRobotsTag(
      `X-Robots-Tag "unavailable_after" value must be a valid date, got: "${value}"`,
    );
}
