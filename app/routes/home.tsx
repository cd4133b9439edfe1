import { Link } from "react-router";
import { getAuth } from "../lib/auth.server";
import { getBackendStatus } from "../lib/backend-status.server";
import { toSessionUser } from "../lib/session-user";
import { getSupabaseEnv } from "../lib/worker-context.server";
import type { Route } from "./+types/home";

export async function loader({ context }: Route.LoaderArgs) {
  const { claims, backendUnreachable } = getAuth(context);
  const supabaseEnv = getSupabaseEnv(context);
  const backend = backendUnreachable ? "unreachable" : await getBackendStatus(supabaseEnv);
  return { user: toSessionUser(claims), backend, backendUrl: supabaseEnv.url };
}

export default function Home({ loaderData }: Route.ComponentProps) {
  const { user, backend, backendUrl } = loaderData;
  return (
    <div className="py-12 sm:py-20">
      {backend === "unreachable" ? <BackendUnreachable url={backendUrl} /> : null}
      <section aria-labelledby="home-title" className="max-w-2xl">
        <h1 id="home-title" className="text-4xl font-semibold tracking-tight sm:text-5xl">
          {user ? "Welcome back." : "Your notes, close to you."}
        </h1>
        <p className="mt-4 text-lg text-ink-600 dark:text-ink-400">
          Edge Notes renders every page on Cloudflare's edge and keeps your data in Supabase, so it
          is fast wherever you are and private by default.
        </p>
        {user ? (
          <Link
            to="/notes"
            data-testid="open-notes"
            className="mt-6 inline-flex items-center rounded-lg bg-brand-600 px-5 py-2.5 text-sm font-medium text-white hover:bg-brand-700"
          >
            Open your notes →
          </Link>
        ) : null}
      </section>

      <section
        aria-labelledby="session-title"
        className="mt-10 max-w-2xl rounded-2xl border border-ink-200 bg-white p-6 shadow-sm dark:border-ink-800 dark:bg-ink-800/40"
      >
        <h2 id="session-title" className="text-sm font-semibold uppercase tracking-wide text-muted">
          Session
        </h2>
        {user ? (
          <dl className="mt-4 grid gap-3 text-sm sm:grid-cols-[8rem_1fr]" data-testid="session">
            <dt className="text-ink-600 dark:text-ink-400">Signed in as</dt>
            <dd className="font-medium break-all" data-testid="session-email">
              {user.email ?? "(no email)"}
            </dd>
            <dt className="text-ink-600 dark:text-ink-400">User ID</dt>
            <dd className="font-mono text-xs break-all" data-testid="session-user-id">
              {user.id}
            </dd>
            <dt className="text-ink-600 dark:text-ink-400">Assurance</dt>
            <dd>{user.aal === "aal2" ? "Two factors (aal2)" : "One factor (aal1)"}</dd>
          </dl>
        ) : (
          <p className="mt-4 text-sm text-ink-600 dark:text-ink-400" data-testid="signed-out">
            You are signed out.
          </p>
        )}
      </section>
    </div>
  );
}

function BackendUnreachable({ url }: { url: string }) {
  return (
    <div
      role="alert"
      data-testid="backend-unreachable"
      className="mb-10 max-w-2xl rounded-xl border border-amber-300 bg-amber-50 p-4 text-sm text-amber-900 dark:border-amber-700 dark:bg-amber-950 dark:text-amber-100"
    >
      <p className="font-semibold">The backend is unreachable</p>
      <p className="mt-1">
        The app could not reach Supabase at <code className="font-mono">{url}</code>, so it cannot
        check who is signed in or load data right now. If you are running locally, start the local
        backend with <code className="font-mono">npm run dev</code>; otherwise try again in a
        moment.
      </p>
    </div>
  );
}
