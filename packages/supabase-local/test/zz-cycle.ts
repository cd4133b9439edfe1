// start (signing keys project) -> status -> fetch -> SIGTERM, timing each phase; N parallel lanes.
import { spawn } from "node:child_process";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { exportJWK, generateKeyPair } from "jose";
import { withBaseSnapshot } from "/work/main/packages/supabase-local/test/support/base-snapshot.ts";
const CLI = "/work/main/packages/supabase-local/bin/supabase-local.js";
const freePort = () => new Promise<number>((r) => { const s = createServer(); s.listen(0, "127.0.0.1", () => { const p = (s.address() as any).port; s.close(() => r(p)); }); });
async function lane(id: number, rounds: number) {
  for (let i = 0; i < rounds; i++) {
    const { privateKey } = await generateKeyPair("ES256", { extractable: true });
    const key = { ...(await exportJWK(privateKey)), kid: crypto.randomUUID(), use: "sig", key_ops: ["sign", "verify"], alg: "ES256" };
    const dir = await mkdtemp(join(tmpdir(), "hang-"));
    await mkdir(join(dir, "supabase"), { recursive: true });
    await writeFile(join(dir, "supabase", "signing_keys.json"), JSON.stringify([key]));
    await writeFile(join(dir, "supabase", "config.toml"), '[auth]\nsigning_keys_path = "./signing_keys.json"\n');
    await withBaseSnapshot(dir);
    const [port, db, mail] = [await freePort(), await freePort(), await freePort()];
    const env = { ...process.env, LOCAL_BACKEND_PORT: String(port), LOCAL_BACKEND_DB_PORT: String(db), LOCAL_BACKEND_MAILPIT_PORT: String(mail) };
    const t0 = Date.now(); const mark: string[] = [];
    const start = spawn(process.execPath, [CLI, "start", "--workdir", dir], { env, stdio: ["ignore", "pipe", "pipe"] });
    let out = ""; start.stdout.on("data", (c) => (out += c)); start.stderr.on("data", (c) => (out += c));
    const closed = new Promise((r) => start.once("close", r));
    const watchdog = setTimeout(() => { console.log(`lane ${id} round ${i} STUCK after ${mark.join(" ")}\n${out}`); }, 30000);
    await new Promise<void>((res, rej) => { const chk = () => out.includes("Press Ctrl-C") && res(); start.stdout.on("data", chk); closed.then(() => rej(new Error("exited: " + out))); });
    mark.push(`started ${Date.now() - t0}`);
    const st = spawn(process.execPath, [CLI, "status", "--workdir", dir], { env, stdio: ["ignore", "pipe", "pipe"] });
    const code = await new Promise((r) => st.once("close", r));
    mark.push(`status(${code}) ${Date.now() - t0}`);
    const row = /service_role key: (.*)$/m.exec(out)?.[1] ?? "";
    const h = await fetch(`http://127.0.0.1:${port}/auth/v1/admin/users?per_page=1`, { headers: { apikey: row } }); await h.arrayBuffer();
    mark.push(`fetch(${h.status}) ${Date.now() - t0}`);
    start.kill("SIGTERM");
    const ec = await closed;
    mark.push(`stopped(${ec}) ${Date.now() - t0}`);
    clearTimeout(watchdog);
    console.log(`lane ${id} round ${i}: ${mark.join(", ")}`);
    await rm(dir, { recursive: true, force: true });
  }
}
const lanes = Number(process.argv[2] ?? 3), rounds = Number(process.argv[3] ?? 5);
await Promise.all(Array.from({ length: lanes }, (_, i) => lane(i, rounds)));
