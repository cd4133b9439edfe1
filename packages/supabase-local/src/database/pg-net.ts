// pg_net's background worker, as the backend runs it (the extension: sql/pg_net--0.20.4.sql). A
// call to net.http_get/http_post/http_delete queues a request and notifies
// `supabase_local_pg_net`; the notification arrives when the transaction commits, and the worker
// then takes up to pg_net.batch_size requests off the queue, sends them side by side with fetch(),
// and writes each response (status, headers, body, content type) or why there is none (a timeout
// with pg_net's message, or curl's words for a failed connection) to net._http_response, where it
// stays for pg_net.ttl, as pg_net's worker does. Requests left queued by a backend that stopped are
// sent when it starts again.
import type { PGlite } from "@electric-sql/pglite";

const CHANNEL = "supabase_local_pg_net";
const USER_AGENT = "pg_net/0.20.4";

interface QueuedRequest {
  id: string;
  method: string;
  url: string;
  timeout_milliseconds: number;
  headers: string[] | null;
  body: Uint8Array | null;
}

interface Response {
  id: string;
  status_code: number | null;
  content: string | null;
  headers: Record<string, string> | null;
  content_type: string | null;
  timed_out: boolean;
  error_msg: string | null;
}

type ListeningDatabase = PGlite & {
  listen(channel: string, listener: (payload: string) => void): Promise<() => Promise<void>>;
};

/** Starts the worker on `db`; the returned function stops it (and waits for requests in flight). */
export async function startPgNetWorker(db: PGlite): Promise<() => Promise<void>> {
  let running: Promise<void> | undefined;
  let again = false;
  let stopped = false;
  const drain = () => {
    if (stopped) return;
    if (running) {
      again = true;
      return;
    }
    running = (async () => {
      do {
        again = false;
        try {
          await sendQueued(db);
        } catch (error) {
          if (!stopped) console.error("[supabase-local] pg_net:", error);
        }
      } while (again && !stopped);
      running = undefined;
    })();
  };
  const unlisten = await (db as ListeningDatabase).listen(CHANNEL, drain);
  drain();
  return async () => {
    stopped = true;
    await unlisten();
    await running;
  };
}

/** Sends every queued request, a batch at a time, and expires old responses. */
async function sendQueued(db: PGlite): Promise<void> {
  const installed = await db.query(
    "select to_regclass('net.http_request_queue') is not null as ok",
  );
  if (!(installed.rows[0] as { ok: boolean }).ok) return;
  const { rows: settings } = await db.query<{ ttl: string; batch: string }>(
    `select coalesce(nullif(current_setting('pg_net.ttl', true), ''), '6 hours') as ttl,
            coalesce(nullif(current_setting('pg_net.batch_size', true), ''), '200') as batch`,
  );
  const { ttl = "6 hours", batch = "200" } = settings[0] ?? {};
  await db.query(
    `with rows as (select ctid from net._http_response where created < now() - $1::interval
                    order by created limit $2)
     delete from net._http_response r using rows where r.ctid = rows.ctid`,
    [ttl, Number(batch)],
  );
  for (;;) {
    const { rows } = await db.query<QueuedRequest>(
      `with rows as (select id from net.http_request_queue order by id limit $1)
       delete from net.http_request_queue q using rows where q.id = rows.id
       returning q.id::text as id, q.method, q.url, q.timeout_milliseconds,
         case when q.headers is null then null
              else array(select key || ': ' || value from jsonb_each_text(q.headers)) end as headers,
         q.body`,
      [Number(batch)],
    );
    if (rows.length === 0) return;
    const responses = await Promise.all(rows.map(send));
    await db.query(
      `insert into net._http_response (id, status_code, content, headers, content_type, timed_out, error_msg)
       select id, status_code, content, headers, content_type, timed_out, error_msg
         from jsonb_to_recordset($1::jsonb) as r(id bigint, status_code int, content text,
           headers jsonb, content_type text, timed_out bool, error_msg text)`,
      [JSON.stringify(responses)],
    );
  }
}

/** One request, as pg_net's curl handle makes it: redirects followed, http(s) only. */
async function send(request: QueuedRequest): Promise<Response> {
  const failed = (error_msg: string, timed_out = false): Response => ({
    id: request.id,
    status_code: null,
    content: null,
    headers: null,
    content_type: null,
    timed_out,
    error_msg,
  });
  const headers = new Headers();
  if (request.headers) {
    for (const line of request.headers) {
      const colon = line.indexOf(":");
      try {
        headers.append(line.slice(0, colon).trim(), line.slice(colon + 1).trim());
      } catch {
        return failed("A libcurl function was given a bad argument");
      }
    }
    headers.set("User-Agent", USER_AGENT);
  }
  let url: URL;
  try {
    url = new URL(request.url);
  } catch {
    return failed("URL using bad/illegal format or missing URL");
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") return failed("Unsupported protocol");
  const method = request.method.toUpperCase();
  const body = request.body && request.body.length > 0 ? new Uint8Array(request.body) : undefined;
  const started = performance.now();
  try {
    const response = await fetch(url, {
      method,
      headers,
      // curl sends a GET's or DELETE's body too; fetch() cannot send one with a GET
      body: method === "GET" ? undefined : body,
      redirect: "follow",
      signal: AbortSignal.timeout(request.timeout_milliseconds),
    });
    const content = await response.text();
    const responseHeaders: Record<string, string> = {};
    response.headers.forEach((value, name) => {
      responseHeaders[name] = value;
    });
    // pg_net keeps the body as a C string: up to its first NUL byte (which no text column holds)
    const text = content.split("\u0000", 1)[0] ?? "";
    return {
      id: request.id,
      status_code: response.status,
      content: text === "" ? null : text,
      headers: responseHeaders,
      content_type: response.headers.get("content-type"),
      timed_out: false,
      error_msg: null,
    };
  } catch (error) {
    const name = (error as { name?: string }).name;
    if (name === "TimeoutError") {
      const total = (performance.now() - started).toFixed(6);
      return failed(
        `Timeout of ${request.timeout_milliseconds} ms reached. Total time: ${total} ms (DNS time: 0.000000 ms, TCP/SSL handshake time: 0.000000 ms, HTTP Request/Response time: ${total} ms)`,
        true,
      );
    }
    return failed(curlMessage(error));
  }
}

/** curl's words (curl_easy_strerror) for why fetch() failed. */
function curlMessage(error: unknown): string {
  const cause = (error as { cause?: { code?: string } }).cause;
  switch (cause?.code) {
    case "ECONNREFUSED":
    case "ECONNRESET":
    case "EHOSTUNREACH":
    case "ENETUNREACH":
      return "Couldn't connect to server";
    case "ENOTFOUND":
    case "EAI_AGAIN":
      return "Couldn't resolve host name";
    case "UND_ERR_HEADERS_TIMEOUT":
    case "UND_ERR_BODY_TIMEOUT":
      return "Timeout was reached";
    default:
      return "Failure when receiving data from the peer";
  }
}
