// The `realtime` schema exists before a project's migrations, as on the CLI: a migration can write
// policies on realtime.messages with realtime.topic(), and triggers that call realtime.send() or
// realtime.broadcast_changes(); the supabase_realtime publication is there to add tables to.
import type { PGlite } from "@electric-sql/pglite";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { openDatabase, setupSql } from "../../src/database/open.ts";
import { baseSnapshot, snapshotCacheDir } from "../../src/database/snapshot.ts";
import { deleteOldMessages } from "../../src/realtime/janitor.ts";

let db: PGlite;
beforeAll(async () => {
  db = await openDatabase(undefined, {
    snapshot: await baseSnapshot(snapshotCacheDir(process.cwd())),
  });
}, 60_000);
afterAll(() => db?.close());

describe("the realtime schema", () => {
  test("realtime.messages has upstream's columns, RLS on, and the publication exists", async () => {
    const { rows } = await db.query<{ column_name: string }>(
      `select column_name from information_schema.columns
       where table_schema = 'realtime' and table_name = 'messages' order by ordinal_position`,
    );
    expect(rows.map((r) => r.column_name)).toEqual([
      "topic",
      "extension",
      "payload",
      "event",
      "private",
      "updated_at",
      "inserted_at",
      "id",
    ]);
    const rls = await db.query<{ relrowsecurity: boolean }>(
      "select relrowsecurity from pg_class where oid = 'realtime.messages'::regclass",
    );
    expect(rls.rows[0]?.relrowsecurity).toBe(true);
    const publication = await db.query(
      "select 1 from pg_publication where pubname = 'supabase_realtime'",
    );
    expect(publication.rows).toHaveLength(1);
  });

  test("a migration's policy and trigger can use it; send() and broadcast_changes() write messages, announced at commit only", async () => {
    await db.exec(`
      create table public.rt_things (id int primary key, name text);
      create policy "read room" on realtime.messages for select to authenticated
        using (realtime.topic() = 'room:1');
      create function public.rt_things_changed() returns trigger language plpgsql as $$
      begin
        perform realtime.broadcast_changes('things', tg_op, tg_op, tg_table_name, tg_table_schema, new, old);
        return null;
      end $$;
      create trigger rt_things_changed after insert or update or delete on public.rt_things
        for each row execute function public.rt_things_changed();
      alter publication supabase_realtime add table public.rt_things;
    `);
    const announced: string[] = [];
    const stop = await db.listen("supabase_local_realtime", (id) => announced.push(id));
    try {
      await db.query("select realtime.send('{\"a\": 1}', 'hello', 'room:1', false)");
      await db.query("insert into public.rt_things values (1, 'one')");
      await db
        .transaction(async (tx) => {
          await tx.query("select realtime.send('{}', 'rolled', 'room:1')");
          await tx.rollback();
        })
        .catch(() => {});
      await expect.poll(() => announced.length).toBe(2);
      const { rows } = await db.query<{
        id: string;
        topic: string;
        event: string;
        private: boolean;
        payload: Record<string, unknown>;
      }>(
        "select id, topic, event, private, payload from realtime.messages order by inserted_at, event",
      );
      expect(rows.map((r) => r.id).sort()).toEqual([...announced].sort());
      const hello = rows.find((r) => r.event === "hello");
      expect(hello).toMatchObject({
        topic: "room:1",
        private: false,
        payload: { a: 1, id: hello?.id },
      });
      expect(rows.find((r) => r.event === "INSERT")).toMatchObject({
        topic: "things",
        private: true,
        payload: {
          operation: "INSERT",
          table: "rt_things",
          schema: "public",
          record: { id: 1, name: "one" },
          old_record: null,
        },
      });
      // the topic is only what the check sets
      const topic = await db.query<{ topic: string | null }>("select realtime.topic() as topic");
      expect(topic.rows[0]?.topic).toBeNull();
    } finally {
      await stop();
    }
  });

  test("old messages go as upstream's janitor drops their day's partition: before the UTC day of 72 hours ago", async () => {
    const topic = `janitor:${crypto.randomUUID()}`;
    await db.query(
      `insert into realtime.messages (topic, extension, event, payload, inserted_at)
       select $1, 'broadcast', label, '{}', at::timestamp
       from (values ('four days', '2026-11-24T23:59:59'), ('three days', '2026-11-25T00:00:00'),
                    ('today', '2026-11-28T10:00:00')) as m(label, at)`,
      [topic],
    );
    // at 2026-11-28 10:00 UTC, 72 hours ago is 2026-11-25 10:00: the 24th's partition goes
    expect(await deleteOldMessages(db, new Date("2026-11-28T10:00:00Z"))).toBeGreaterThanOrEqual(1);
    const { rows } = await db.query<{ event: string }>(
      "select event from realtime.messages where topic = $1 order by inserted_at",
      [topic],
    );
    expect(rows.map((r) => r.event)).toEqual(["three days", "today"]);
    // the day after, the 25th's goes too
    await deleteOldMessages(db, new Date("2026-11-29T00:00:00Z"));
    const after = await db.query<{ event: string }>(
      "select event from realtime.messages where topic = $1",
      [topic],
    );
    expect(after.rows.map((r) => r.event)).toEqual(["today"]);
  });

  test("a database set up before `not.` and the newer operators gets them when it opens again", async () => {
    // the types as an older setup made them, the subscriptions' table holding the filter type
    await db.exec(`
      drop table realtime.subscription;
      drop type realtime.user_defined_filter cascade;
      drop type realtime.equality_op cascade;
      create type realtime.equality_op as enum ('eq', 'neq', 'lt', 'lte', 'gt', 'gte', 'in');
      create type realtime.user_defined_filter as (
        column_name text, op realtime.equality_op, value text
      );
      create table realtime.subscription (
        id bigint generated always as identity primary key,
        filters realtime.user_defined_filter[] not null default '{}'
      );
    `);
    await db.exec((await setupSql()).realtime);
    const ops = await db.query<{ op: string }>(
      "select unnest(enum_range(null::realtime.equality_op))::text as op",
    );
    expect(ops.rows.map((r) => r.op)).toEqual([
      "eq",
      "neq",
      "lt",
      "lte",
      "gt",
      "gte",
      "in",
      "like",
      "ilike",
      "is",
      "match",
      "imatch",
      "isdistinct",
    ]);
    await db.exec("create table if not exists public.rt_upgraded (id int primary key, t text)");
    const { rows } = await db.query<{ passes: boolean }>(
      `select realtime.supabase_local_visible_through_filters(
         '{"id": 1, "t": "ab"}', 'public.rt_upgraded',
         array[('t', 'like', 'a%', false), ('t', 'eq', 'zz', true)]::realtime.user_defined_filter[]
       ) as passes`,
    );
    expect(rows[0]?.passes).toBe(true);
    const columns = await db.query<{ column_name: string }>(
      `select column_name from information_schema.columns
       where table_schema = 'realtime' and table_name = 'subscription' order by ordinal_position`,
    );
    expect(columns.rows.map((r) => r.column_name)).toContain("action_filter");
  });
});
