// `node bench/session-check.ts`: what the ended-session check (decision 023) costs the data API
// requests of GET /notes, measured apart from the Worker and from other work on the machine: two
// in-memory backends of this repository in this process, one as migrated and one with the check
// taken out (the pre-request reset, the restrictive policies dropped), each with a user of 30
// notes, asked for the page's data request (list_notes(): the list, its count, the tags) in turns, so that
// a busy machine slows both alike. (`npm run bench` no longer has this comparison: its arms share
// one backend and take turns in rounds, and the check cannot be taken out and put back between
// two arms of a round.)
//
//   ROUNDS  interleaved rounds (default 300, after 30 to warm up)
import { createLocalBackend, KEYS } from "@edge-notes/supabase-local";
import { createClient } from "@supabase/supabase-js";
import { ROOT } from "../tests/support/preview.ts";
import { WITHOUT_SESSION_CHECK } from "./backend.ts";

const ROUNDS = Number(process.env.ROUNDS ?? 300);
const PASSWORD = `bench-${crypto.randomUUID()}`;

async function notesPage(withCheck: boolean) {
  const backend = await createLocalBackend({
    projectDir: ROOT,
    seed: false,
    host: false,
    config: { auth: { passwordHashCost: 4 } },
  });
  if (!withCheck) await backend.db.exec(WITHOUT_SESSION_CHECK);
  const fetch = (input: RequestInfo | URL, init?: RequestInit) =>
    backend.fetch(new Request(input, init));
  const admin = createClient(backend.url, KEYS.secret, {
    auth: { persistSession: false },
    global: { fetch },
  });
  const email = `bench-${crypto.randomUUID()}@example.com`;
  const created = await admin.auth.admin.createUser({
    email,
    password: PASSWORD,
    email_confirm: true,
  });
  if (created.error) throw created.error;
  const owner = created.data.user.id;
  const notes = Array.from({ length: 30 }, (_, i) => ({
    title: `Bench note ${i + 1}`,
    body: "Some words. ".repeat(30),
    owner_id: owner,
  }));
  const inserted = await admin.from("notes").insert(notes);
  if (inserted.error) throw inserted.error;
  const user = createClient(backend.url, KEYS.publishable, {
    auth: { persistSession: false },
    global: { fetch },
  });
  const signIn = await user.auth.signInWithPassword({ email, password: PASSWORD });
  if (signIn.error) throw signIn.error;
  const headers = {
    apikey: KEYS.publishable,
    Authorization: `Bearer ${signIn.data.session.access_token}`,
  };
  // what app/routes/notes/parts/data.server.ts asks for /notes: list_notes(), the page, its total
  // and the tags in one request
  const page = async () => {
    const answer = await fetch(`${backend.url}/rest/v1/rpc/list_notes`, {
      method: "POST",
      headers: { ...headers, "Content-Type": "application/json" },
      body: JSON.stringify({
        shared_with_me: false,
        archived_view: false,
        search_words: "",
        tag_name: "",
        page_offset: 0,
        page_size: 20,
      }),
    });
    if (!answer.ok) throw new Error(`${answer.status} ${await answer.text()}`);
    await answer.text();
  };
  return { page, close: () => backend.close() };
}

const checked = await notesPage(true);
const unchecked = await notesPage(false);
const times = { checked: [] as number[], unchecked: [] as number[] };
try {
  for (let round = -30; round < ROUNDS; round++) {
    // each goes first in every other round
    const order =
      round % 2 ? (["checked", "unchecked"] as const) : (["unchecked", "checked"] as const);
    for (const which of order) {
      const started = performance.now();
      await (which === "checked" ? checked : unchecked).page();
      if (round >= 0) times[which].push(performance.now() - started);
    }
  }
} finally {
  await Promise.all([checked.close(), unchecked.close()]);
}

const quantile = (values: number[], q: number) =>
  [...values].sort((a, b) => a - b)[Math.floor(values.length * q)] ?? Number.NaN;
const line = (label: string, values: number[]) =>
  `  ${label.padEnd(40)} median ${quantile(values, 0.5).toFixed(2).padStart(6)} ms, p90 ${quantile(values, 0.9).toFixed(2).padStart(6)} ms`;
const [a, b] = [quantile(times.checked, 0.5), quantile(times.unchecked, 0.5)];
console.log(`GET /notes' data API request, ${ROUNDS} interleaved rounds, in process`);
console.log(line("with the ended-session check", times.checked));
console.log(line("without it", times.unchecked));
console.log(`  cost: +${(a - b).toFixed(2)} ms a page (median), ${(a / b).toFixed(2)}x`);
