// `npm test`: the checks (`npm run lint`: Biome and actionlint; `npm run typecheck`: wrangler
// types, react-router typegen, tsc -b) and the test suite (`vitest run`) side by side. The suite
// keeps two cores busy for most of its run but not at its start (its backend and workerd starting)
// and end, and the checks fill those gaps: run one after the other, the checks added their own
// 15 to 20 seconds to every run. The suite's output streams as it runs; each check's is printed
// after it, under its name. Exits with 1 when anything failed.
import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";

// Every Node process of the run (Vitest and its threads, the CLIs the checks and tests start) keeps
// V8's compiled code of the modules it loads in node_modules/.cache, as Node's compile cache does
// when NODE_COMPILE_CACHE names a folder: a later run loads them without compiling them again.
process.env.NODE_COMPILE_CACHE ??= fileURLToPath(
  new URL("../node_modules/.cache/node-compile-cache", import.meta.url),
);

interface Outcome {
  name: string;
  code: number;
  seconds: number;
  output: string;
}

function run(name: string, command: string, args: string[], stream: boolean): Promise<Outcome> {
  const started = performance.now();
  return new Promise((resolve) => {
    const child = spawn(command, args, { stdio: stream ? "inherit" : ["ignore", "pipe", "pipe"] });
    let output = "";
    child.stdout?.on("data", (chunk: Buffer) => {
      output += chunk;
    });
    child.stderr?.on("data", (chunk: Buffer) => {
      output += chunk;
    });
    const done = (code: number) =>
      resolve({ name, code, seconds: (performance.now() - started) / 1000, output });
    child.on("error", (error) => {
      output += `${error.message}\n`;
      done(1);
    });
    child.on("close", (code, signal) => done(code ?? (signal ? 1 : 0)));
  });
}

const checks = [
  run("lint", "npm", ["run", "--silent", "lint"], false),
  run("typecheck", "npm", ["run", "--silent", "typecheck"], false),
];
const suite = await run("vitest", "vitest", ["run", ...process.argv.slice(2)], true);
const outcomes = [...(await Promise.all(checks)), suite];

for (const check of outcomes.slice(0, -1)) {
  if (check.code !== 0) process.stdout.write(`\n${check.output.trimEnd()}\n`);
}
console.log();
for (const { name, code, seconds } of outcomes)
  console.log(`${code === 0 ? "ok    " : "FAILED"} ${name.padEnd(9)} ${seconds.toFixed(1)} s`);
process.exitCode = outcomes.some((outcome) => outcome.code !== 0) ? 1 : 0;
