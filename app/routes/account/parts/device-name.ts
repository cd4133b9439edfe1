/**
 * A device in words from its User-Agent header: "Chrome on macOS", "Safari on iPhone".
 *
 * Deliberately small (a UA-parsing library is 15–30 KiB in the Worker for a label): the browsers
 * and systems people sign in from, checked in the order that tells them apart (Edge and Opera say
 * "Chrome" too, Chrome says "Safari", iPadOS may say "Macintosh"). Anything else is shown as it
 * came, shortened, so an unknown client is still recognisable.
 */

const BROWSERS: [RegExp, string][] = [
  [/\bEdg(?:e|A|iOS)?\//, "Edge"],
  [/\b(?:OPR|Opera)\//, "Opera"],
  [/\bSamsungBrowser\//, "Samsung Internet"],
  [/\bFirefox\/|\bFxiOS\//, "Firefox"],
  [/\b(?:Headless)?Chrome\/|\bCriOS\/|\bChromium\//, "Chrome"],
  [/\bVersion\/[\d.]+.*\bSafari\/|\b(?:iPhone|iPad).*AppleWebKit\//, "Safari"],
];

const SYSTEMS: [RegExp, string][] = [
  [/\biPhone\b/, "iPhone"],
  [/\biPad\b/, "iPad"],
  [/\bAndroid\b/, "Android"],
  [/\bCrOS\b/, "ChromeOS"],
  [/\bWindows\b/, "Windows"],
  [/\bMac OS X\b|\bMacintosh\b/, "macOS"],
  [/\bLinux\b/, "Linux"],
];

const MAX_RAW = 40;
/**
 * How much of a User-Agent is read: real ones are a few hundred characters, and the Safari
 * pattern's `.*` costs time quadratic in a longer one (2.8 s for 128 KB in Node).
 */
const MAX_AGENT = 512;

export function deviceName(userAgent: string | null | undefined): string {
  const agent = (userAgent ?? "").slice(0, MAX_AGENT).trim();
  if (agent === "") return "Unknown device";
  const browser = BROWSERS.find(([pattern]) => pattern.test(agent))?.[1];
  const system = SYSTEMS.find(([pattern]) => pattern.test(agent))?.[1];
  if (browser && system) return `${browser} on ${system}`;
  if (browser || system) return (browser ?? system) as string;
  return agent.length > MAX_RAW ? `${agent.slice(0, MAX_RAW - 1)}…` : agent;
}
