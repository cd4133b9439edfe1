import { accessSync, constants } from "node:fs";
import { type Browser, chromium } from "playwright-core";

/** Debian's Chromium by default; CHROMIUM_PATH points at another Chromium or Chrome binary. */
export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";

/** Fails with what to do when there is no browser to drive. */
export function assertChromium(): void {
  try {
    accessSync(CHROMIUM_PATH, constants.X_OK);
  } catch {
    throw new Error(
      `No Chromium at ${CHROMIUM_PATH}. The end-to-end tests drive a real browser: install one ` +
        "(Debian/Ubuntu: apt-get install -y chromium) or set CHROMIUM_PATH to a Chromium or " +
        "Chrome executable.",
    );
  }
}

/** Headless Chromium, as quiet as it gets (no sync, updates or background traffic). */
export function launchChromium(): Promise<Browser> {
  assertChromium();
  return chromium.launch({
    executablePath: CHROMIUM_PATH,
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
  });
}
