import { describe, expect, it } from "vitest";
import { deviceName } from "../../../app/routes/account/parts/device-name";

describe("deviceName", () => {
  it.each([
    [
      "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36",
      "Chrome on macOS",
    ],
    [
      "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36 Edg/131.0.2903.86",
      "Edge on Windows",
    ],
    [
      "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/130.0.0.0 Safari/537.36 OPR/115.0.0.0",
      "Opera on Windows",
    ],
    [
      "Mozilla/5.0 (X11; Ubuntu; Linux x86_64; rv:133.0) Gecko/20100101 Firefox/133.0",
      "Firefox on Linux",
    ],
    [
      "Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Mobile/15E148 Safari/604.1",
      "Safari on iPhone",
    ],
    [
      "Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) CriOS/131.0.6778.73 Mobile/15E148 Safari/604.1",
      "Chrome on iPhone",
    ],
    [
      "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Safari/605.1.15",
      "Safari on macOS",
    ],
    [
      "Mozilla/5.0 (Linux; Android 14; SM-S918B) AppleWebKit/537.36 (KHTML, like Gecko) SamsungBrowser/26.0 Chrome/122.0.0.0 Mobile Safari/537.36",
      "Samsung Internet on Android",
    ],
    [
      "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Mobile Safari/537.36",
      "Chrome on Android",
    ],
    [
      "Mozilla/5.0 (X11; CrOS x86_64 14541.0.0) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36",
      "Chrome on ChromeOS",
    ],
    [
      "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) HeadlessChrome/131.0.0.0 Safari/537.36",
      "Chrome on Linux",
    ],
  ])("%s → %s", (agent, expected) => {
    expect(deviceName(agent)).toBe(expected);
  });

  it("shows an unknown client as it came, shortened; nothing at all as an unknown device", () => {
    expect(deviceName("curl/8.5.0")).toBe("curl/8.5.0");
    expect(deviceName(`node-fetch ${"x".repeat(80)}`)).toHaveLength(40);
    expect(deviceName(`node-fetch ${"x".repeat(80)}`).endsWith("…")).toBe(true);
    expect(deviceName("")).toBe("Unknown device");
    expect(deviceName(null)).toBe("Unknown device");
  });

  it("reads only the first 512 characters: its patterns cost time quadratic in a longer header", () => {
    // named from what a real User-Agent holds at its start; what comes after is not read
    expect(deviceName(`${"iPhone ".repeat(20_000)}AppleWebKit/605`)).toBe("iPhone");
    expect(deviceName(`Mozilla/5.0 (iPhone) ${" ".repeat(600)}AppleWebKit/605`)).toBe("iPhone");
  });
});
