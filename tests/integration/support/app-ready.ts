// Before an integration test file runs: the app the globalSetup builds and starts in the background
// (tests/setup/app.ts) is serving, or the file fails with the reason it is not.
import { existsSync, readFileSync } from "node:fs";
import { setTimeout as sleep } from "node:timers/promises";
import { beforeAll } from "vitest";
import { APP_STATE_VARIABLE } from "../../setup/app.ts";

const TIMEOUT_MS = 120_000;

beforeAll(async () => {
  const file = process.env[APP_STATE_VARIABLE];
  if (!file) throw new Error(`${APP_STATE_VARIABLE} is not set: run the tests through Vitest`);
  const deadline = Date.now() + TIMEOUT_MS;
  while (!existsSync(file) || readFileSync(file, "utf8") === "") {
    if (Date.now() > deadline) throw new Error("The app was not built and started in 2 minutes");
    await sleep(100);
  }
  const state = readFileSync(file, "utf8");
  if (state !== "ready") throw new Error(state);
}, TIMEOUT_MS + 5_000);
