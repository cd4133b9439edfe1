// realtime.messages kept as long as upstream keeps them. Upstream partitions the table by day and
// its janitor (every 4 hours, on the CLI's stack too: RUN_JANITOR=true) drops each day's partition
// once that day is before the UTC date of 72 hours ago (Realtime.Messages.delete_old_messages).
// Here the table is one (decision 026), so the same rows go by a delete: at the backend's start
// and every 4 hours after.
import type { PGlite } from "@electric-sql/pglite";

/** Upstream's janitor_schedule_timer_in_ms default. */
export const JANITOR_INTERVAL_MS = 4 * 60 * 60 * 1000;

/** Deletes the messages of the days upstream would have dropped by `now`; how many went. */
export async function deleteOldMessages(db: PGlite, now = new Date()): Promise<number> {
  const limit = new Date(now.getTime() - 72 * 60 * 60 * 1000).toISOString().slice(0, 10);
  // inserted_at is a timestamp without time zone written by now() in the database's zone (UTC)
  const { affectedRows } = await db.query(
    "delete from realtime.messages where inserted_at < $1::date",
    [limit],
  );
  return affectedRows ?? 0;
}

/** Runs deleteOldMessages now and every 4 hours, while the process lives; returns the stop. */
export function startJanitor(db: PGlite): () => void {
  const run = () => void deleteOldMessages(db).catch(() => {});
  run();
  const timer = setInterval(run, JANITOR_INTERVAL_MS);
  timer.unref();
  return () => clearInterval(timer);
}
