// A V8 CPU profile of the Worker in workerd, through the inspector, and where its time went:
// `WORKER_CPU_PROFILE=<file.cpuprofile> node bench/worker-cpu.ts …` (worker-cpu.ts says how).
// Build with `react-router build --sourcemapServer` first and every sample is named by the source
// file it ran in (a package, or a file of the app): without maps, by the bundle's chunk alone.
// The file opens in Chrome DevTools (Performance panel) or speedscope for the flame graph.
import { existsSync, readFileSync } from "node:fs";
import { SourceMap } from "node:module";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
  columnNumber: number;
}

interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  children?: number[];
}

export interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
  endTime: number;
}

/** Samples every 100 µs: a request of a few ms gets dozens of them. */
const SAMPLING_INTERVAL_US = 100;

/** An inspector session with one worker (ws://host:port/core:user:<name>). */
export async function profileWhile(
  inspectorUrl: string,
  work: () => Promise<void>,
): Promise<CpuProfile> {
  const socket = new WebSocket(inspectorUrl);
  await new Promise<void>((resolve, reject) => {
    socket.addEventListener("open", () => resolve(), { once: true });
    socket.addEventListener("error", () => reject(new Error(`no inspector at ${inspectorUrl}`)), {
      once: true,
    });
  });
  let nextId = 1;
  const pending = new Map<number, (result: unknown) => void>();
  socket.addEventListener("message", (event) => {
    const message = JSON.parse(String(event.data)) as { id?: number; result?: unknown };
    if (message.id !== undefined) pending.get(message.id)?.(message.result);
  });
  const send = (method: string, params: Record<string, unknown> = {}) =>
    new Promise<unknown>((resolve) => {
      const id = nextId++;
      pending.set(id, resolve);
      socket.send(JSON.stringify({ id, method, params }));
    });
  try {
    await send("Profiler.enable");
    await send("Profiler.setSamplingInterval", { interval: SAMPLING_INTERVAL_US });
    await send("Profiler.start");
    await work();
    const { profile } = (await send("Profiler.stop")) as { profile: CpuProfile };
    return profile;
  } finally {
    socket.close();
  }
}

/** A sample's place in the source: the package (or the app's file) and the function. */
interface Place {
  owner: string;
  fn: string;
}

/** Where each profile node ran, through the bundle's source maps when the build has them. */
function placesOf(profile: CpuProfile, root: string): Map<number, Place> {
  const maps = new Map<string, SourceMap | null>();
  const mapOf = (url: string): SourceMap | null => {
    if (!maps.has(url)) {
      let map: SourceMap | null = null;
      try {
        // workerd names a module by its path under the Worker's modules root
        const file = url.startsWith("file:") ? fileURLToPath(url) : join(root, url);
        if (existsSync(`${file}.map`)) {
          map = new SourceMap(JSON.parse(readFileSync(`${file}.map`, "utf8")));
        }
      } catch {
        map = null;
      }
      maps.set(url, map);
    }
    return maps.get(url) ?? null;
  };
  const places = new Map<number, Place>();
  for (const node of profile.nodes) {
    const { url, functionName, lineNumber, columnNumber } = node.callFrame;
    const name = functionName || "(anonymous)";
    if (!url) {
      places.set(node.id, { owner: name.startsWith("(") ? name : "(runtime)", fn: name });
      continue;
    }
    const entry = mapOf(url)?.findEntry(lineNumber, columnNumber) as
      | { originalSource?: string; originalLine?: number }
      | undefined;
    const source = entry?.originalSource ?? url.replace(/^.*\//, "");
    const line = entry?.originalSource ? (entry.originalLine ?? 0) + 1 : lineNumber + 1;
    places.set(node.id, {
      owner: ownerOf(source),
      fn: `${name} ${source.replace(/^.*node_modules\//, "").replace(/^.*\/app\//, "app/")}:${line}`,
    });
  }
  return places;
}

/** `node_modules/@scope/name/…` -> `@scope/name`; the app's own files by path under app/. */
function ownerOf(source: string): string {
  const inPackage = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(source);
  if (inPackage) return inPackage[1] as string;
  const inApp = /\/((?:app|workers)\/.*)$/.exec(source);
  return inApp ? (inApp[1] as string) : source;
}

/** Self time by package (or app file) and by function, and inclusive time of both. */
export function summarise(profile: CpuProfile, root: string, requests: number, top = 25): string {
  const places = placesOf(profile, root);
  const parent = new Map<number, number>();
  for (const node of profile.nodes) {
    for (const child of node.children ?? []) parent.set(child, node.id);
  }
  const selfByOwner = new Map<string, number>();
  const selfByFn = new Map<string, number>();
  const inclusiveByFn = new Map<string, number>();
  const inclusiveByOwner = new Map<string, number>();
  let total = 0;
  let idle = 0;
  profile.samples.forEach((id, i) => {
    const us = profile.timeDeltas[i + 1] ?? profile.timeDeltas[i] ?? 0;
    const place = places.get(id);
    if (!place) return;
    // (program) is the runtime outside JavaScript (workerd's own C++ among it); (idle) is waiting.
    if (place.owner === "(idle)") idle += us;
    total += us;
    selfByOwner.set(place.owner, (selfByOwner.get(place.owner) ?? 0) + us);
    selfByFn.set(place.fn, (selfByFn.get(place.fn) ?? 0) + us);
    const seenFn = new Set<string>();
    const seenOwner = new Set<string>();
    for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
      const frame = places.get(at);
      if (!frame) continue;
      if (!seenFn.has(frame.fn)) {
        seenFn.add(frame.fn);
        inclusiveByFn.set(frame.fn, (inclusiveByFn.get(frame.fn) ?? 0) + us);
      }
      if (!seenOwner.has(frame.owner)) {
        seenOwner.add(frame.owner);
        inclusiveByOwner.set(frame.owner, (inclusiveByOwner.get(frame.owner) ?? 0) + us);
      }
    }
  });
  const busy = total - idle;
  const perRequest = (us: number) => `${(us / 1000 / requests).toFixed(3)} ms`;
  const share = (us: number) => `${((100 * us) / busy).toFixed(1)}%`.padStart(6);
  const table = (title: string, entries: Map<string, number>, count: number) => [
    title,
    ...[...entries]
      .filter(([key]) => key !== "(idle)")
      .sort((a, b) => b[1] - a[1])
      .slice(0, count)
      .map(([key, us]) => `  ${share(us)} ${perRequest(us).padStart(10)}  ${key}`),
  ];
  return [
    `profile: ${perRequest(busy)} busy per request over ${requests} requests (idle ${perRequest(idle)})`,
    ...table("self time by package or app file:", selfByOwner, top),
    ...table("self time by function:", selfByFn, top),
    ...table("inclusive time by package or app file (a stack counts once):", inclusiveByOwner, top),
    ...table("inclusive time by function:", inclusiveByFn, top * 2),
  ].join("\n");
}
