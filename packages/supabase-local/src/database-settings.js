// The settings the database thread (database-worker.js) starts Postgres with, beside PGlite's own
// (PGlite.defaultStartParams). Postgres' defaults size shared memory for a server (128 MB of
// buffers for 100 connections), and PGlite zeroes all of it on every start: half a second of a
// warm start. One session over a database of a few MB needs a fraction of it. (JavaScript, as the
// database thread loads it; `npm run bench` opens PGlite alone with the same settings.)

/** `-c name=value` settings, as Postgres takes them on its command line. */
export const START_SETTINGS = ["shared_buffers=16MB", "max_connections=8"];
