// pg_net (0.20.4's interface, its requests sent by the backend): a request queued in a transaction
// is sent after the commit, never after a rollback, with pg_net's headers and encoding, and its
// response (or timeout, or failed connection) is written to net._http_response as pg_net writes it.
// A database webhook (a trigger calling net.http_post) posts each new row.
import { rmSync } from "node:fs";
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, expect, test } from "vitest";
import { createLocalBackend, type LocalBackend } from "../src/index.ts";
import { temporaryProject } from "./support/base-snapshot.ts";

let project: string;
let backend: LocalBackend;
let server: Server;
let target: string;
const received: {
  method: string;
  url: string;
  headers: IncomingMessage["headers"];
  body: string;
}[] = [];

beforeAll(async () => {
  server = createServer((request, response) => {
    let body = "";
    request.on("data", (chunk) => {
      body += chunk;
    });
    request.on("end", () => {
      received.push({
        method: request.method ?? "",
        url: request.url ?? "",
        headers: request.headers,
        body,
      });
      if (request.url?.startsWith("/slow")) return; // never answers
      if (request.url?.startsWith("/nul")) {
        response.writeHead(200, { "content-type": "text/plain" }).end("before\u0000after");
        return;
      }
      if (request.url?.startsWith("/moved")) {
        response.writeHead(302, { location: "/landed" }).end();
        return;
      }
      response.writeHead(201, { "content-type": "application/json", "x-answer": "42" });
      response.end(JSON.stringify({ ok: true, path: request.url }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  target = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  let cacheDir: string;
  ({ project, cacheDir } = await temporaryProject("pg-net-project", {
    "migrations/20240101000000_webhook.sql": `create extension if not exists pg_net with schema extensions;
     create table public.orders (id bigint generated always as identity primary key, item text not null);
     create function public.order_webhook() returns trigger language plpgsql security definer as $$
     begin
       perform net.http_post(
         url := current_setting('app.webhook_url'),
         body := jsonb_build_object('type', tg_op, 'record', to_jsonb(new)),
         headers := '{"Content-Type": "application/json", "Authorization": "Bearer hook"}'::jsonb
       );
       return new;
     end $$;
     create trigger order_created after insert on public.orders
       for each row execute function public.order_webhook();`,
  }));
  backend = await createLocalBackend({ projectDir: project, host: false, cacheDir, seed: false });
}, 120_000);

afterAll(async () => {
  await backend?.close();
  server?.closeAllConnections();
  server?.close();
  rmSync(project, { recursive: true, force: true });
});

/** The response to request `id`, once the backend has written it. */
async function responseTo(id: number | string) {
  await expect
    .poll(
      async () =>
        (await backend.db.query("select 1 from net._http_response where id = $1", [id])).rows
          .length,
      {
        timeout: 10_000,
      },
    )
    .toBe(1);
  return (
    await backend.db.query<Record<string, unknown>>(
      "select * from net._http_response where id = $1",
      [id],
    )
  ).rows[0] as Record<string, unknown>;
}

test("a POST is sent after the commit, with pg_net's headers, and its response is written", async () => {
  const { rows } = await backend.db.query<{ id: number }>(
    `select net.http_post(url := $1, body := '{"hello": "world"}', params := '{"q": "a b&c"}') as id`,
    [`${target}/post`],
  );
  const id = rows[0]?.id as number;
  const response = await responseTo(id);
  expect(response).toMatchObject({
    status_code: 201,
    content_type: "application/json",
    content: JSON.stringify({ ok: true, path: "/post?q=a%20b%26c" }),
    timed_out: false,
    error_msg: null,
  });
  expect(response.headers).toMatchObject({ "x-answer": "42", "content-type": "application/json" });
  const sent = received.find((r) => r.url === "/post?q=a%20b%26c");
  expect(sent).toMatchObject({ method: "POST", body: '{"hello": "world"}' });
  expect(sent?.headers["user-agent"]).toBe("pg_net/0.20.4");
  expect(sent?.headers["content-type"]).toBe("application/json");
  expect(
    (await backend.db.query("select (net._http_collect_response($1)).status::text as status", [id]))
      .rows,
  ).toEqual([{ status: "SUCCESS" }]);
});

test("nothing is sent for a transaction rolled back; a webhook trigger posts each committed row", async () => {
  await backend.db.exec(`set app.webhook_url = '${target}/hook'`);
  const before = received.filter((r) => r.url === "/hook").length;
  await expect(
    backend.db.transaction(async (tx) => {
      await tx.query("insert into public.orders (item) values ('lost')");
      throw new Error("rolled back");
    }),
  ).rejects.toThrow("rolled back");
  await backend.db.query("insert into public.orders (item) values ('kept')");
  await expect
    .poll(() => received.filter((r) => r.url === "/hook").length, { timeout: 10_000 })
    .toBe(before + 1);
  const hook = received.filter((r) => r.url === "/hook").at(-1);
  expect(JSON.parse(hook?.body ?? "{}")).toMatchObject({
    type: "INSERT",
    record: { item: "kept" },
  });
  expect(hook?.headers.authorization).toBe("Bearer hook");
  // the queue is empty once sent
  expect(
    (await backend.db.query("select count(*)::int as n from net.http_request_queue")).rows,
  ).toEqual([{ n: 0 }]);
});

test("GET and DELETE, redirects followed; a timeout and a refused connection are written as pg_net writes them", async () => {
  const get = (
    await backend.db.query<{ id: number }>("select net.http_get($1) as id", [`${target}/moved`])
  ).rows[0]?.id;
  const del = (
    await backend.db.query<{ id: number }>(
      `select net.http_delete($1, body := '{"why": "gone"}') as id`,
      [`${target}/thing`],
    )
  ).rows[0]?.id;
  const slow = (
    await backend.db.query<{ id: number }>(
      "select net.http_get($1, timeout_milliseconds := 200) as id",
      [`${target}/slow`],
    )
  ).rows[0]?.id;
  const closed = createServer();
  await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
  const closedPort = (closed.address() as AddressInfo).port;
  await new Promise((resolve) => closed.close(resolve));
  const refused = (
    await backend.db.query<{ id: number }>("select net.http_get($1) as id", [
      `http://127.0.0.1:${closedPort}/x`,
    ])
  ).rows[0]?.id;
  expect(await responseTo(get as number)).toMatchObject({ status_code: 201 });
  expect(received.some((r) => r.url === "/landed" && r.method === "GET")).toBe(true);
  expect(await responseTo(del as number)).toMatchObject({ status_code: 201 });
  expect(received.find((r) => r.url === "/thing")).toMatchObject({
    method: "DELETE",
    body: '{"why": "gone"}',
  });
  const timedOut = await responseTo(slow as number);
  expect(timedOut).toMatchObject({ status_code: null, timed_out: true });
  expect(timedOut.error_msg).toMatch(/^Timeout of 200 ms reached\. Total time: /);
  expect(await responseTo(refused as number)).toMatchObject({
    status_code: null,
    timed_out: false,
    error_msg: "Couldn't connect to server",
  });
  expect(
    (
      await backend.db.query("select (net._http_collect_response($1)).message as message", [
        refused,
      ])
    ).rows,
  ).toEqual([{ message: "Couldn't connect to server" }]);
});

test("pg_net's refusals and encoding; waiting in the same statement says why it cannot", async () => {
  await expect(
    backend.db.query(
      `select net.http_post('${target}/x', headers := '{"Content-Type": "text/plain"}')`,
    ),
  ).rejects.toThrow('Content-Type header must be "application/json"');
  await expect(
    backend.db.query(
      "select net.http_get('http://x', timeout_milliseconds := 1000, headers := '{}')::text",
    ),
  ).resolves.toBeTruthy();
  expect((await backend.db.query("select net._urlencode_string('a b/ç~') as e")).rows).toEqual([
    { e: "a%20b%2F%C3%A7~" },
  ]);
  expect(
    (
      await backend.db.query(
        "select net._encode_url_with_params_array('http://h/p?x=1#f', array['a=1', 'b=2']) as u",
      )
    ).rows,
  ).toEqual([{ u: "http://h/p?x=1&a=1&b=2#f" }]);
  await expect(
    backend.db.query("select net._http_collect_response(987654321, async := false)"),
  ).rejects.toThrow("the response to request 987654321 is not here yet");
});

test("a body with a NUL byte is kept up to it, as pg_net's C string keeps it, and the other responses of its batch are written", async () => {
  const { rows } = await backend.db.query<{ nul: number; plain: number }>(
    "select net.http_get($1) as nul, net.http_get($2) as plain",
    [`${target}/nul`, `${target}/plain`],
  );
  expect(await responseTo(rows[0]?.nul as number)).toMatchObject({
    status_code: 200,
    content: "before",
  });
  expect(await responseTo(rows[0]?.plain as number)).toMatchObject({ status_code: 201 });
});
