// The Worker's own CPU time, as Linux counts it for the workerd process that runs it (/proc): what
// Cloudflare bills and limits per request is the isolate's CPU, and workerd's process time is the
// closest figure outside the runtime (its HTTP handling and the asset server come with it).
import { readdirSync, readFileSync } from "node:fs";

const CLOCK_TICKS_PER_SECOND = 100;

/** PIDs of the workerd processes running now. */
export function workerdPids(): Set<string> {
  const pids = new Set<string>();
  for (const pid of readdirSync("/proc").filter((name) => /^\d+$/.test(name))) {
    try {
      if (/workerd\0serve/.test(readFileSync(`/proc/${pid}/cmdline`, "latin1"))) pids.add(pid);
    } catch {
      // gone meanwhile
    }
  }
  return pids;
}

/** The fields of /proc/<pid>/stat after the command name (state is the first). */
function statFields(pid: string): string[] {
  const stat = readFileSync(`/proc/${pid}/stat`, "latin1");
  return stat.slice(stat.lastIndexOf(")") + 2).split(" ");
}

/** CPU seconds (user + system) a process has used so far. */
export function cpuSeconds(pid: string): number {
  const fields = statFields(pid);
  return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS_PER_SECOND;
}

/** The workerd process in process group `group` (a `vite preview` started detached), if one runs. */
export function workerdInGroup(group: number): string | undefined {
  return [...workerdPids()].find((pid) => {
    try {
      return Number(statFields(pid)[2]) === group;
    } catch {
      return false;
    }
  });
}
