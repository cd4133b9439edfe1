import { getAuth } from "../../lib/auth.server";
import { needsSecondFactor } from "../../lib/guards.server";
import { toSessionUser } from "../../lib/session-user";
import { getSupabaseEnv } from "../../lib/worker-context.server";
import { recentNotes } from "../notes/parts/data.server";
import { useLiveLists } from "../notes/parts/live";
import type { Route } from "./+types/index";
import { getBackendStatus } from "./parts/backend-status.server";
import { HomeDashboard } from "./parts/home-dashboard";
import { ProductIntro } from "./parts/product-intro";

/** How many notes the signed-in home page lists. */
const RECENT_COUNT = 5;

/**
 * Signed out: the product and its privacy, with no call to the backend beyond the cached health
 * probe. Signed in: the latest notes (one query) and quick actions.
 */
export async function loader({ context }: Route.LoaderArgs) {
  const auth = getAuth(context);
  const { claims, backendUnreachable } = auth;
  const supabaseEnv = getSupabaseEnv(context);
  const backend = backendUnreachable ? "unreachable" : await getBackendStatus(supabaseEnv);
  const user = toSessionUser(claims);
  const recent =
    user && backend === "reachable" && !needsSecondFactor(auth)
      ? await recentNotes(auth.supabase, user.id, RECENT_COUNT)
      : null;
  return { user, backend, backendUrl: supabaseEnv.url, recent };
}

export default function Home({ loaderData }: Route.ComponentProps) {
  const { user, backend, backendUrl, recent } = loaderData;
  // The notes edited last, kept current (signed in only).
  useLiveLists();
  return (
    <div className="py-12 sm:py-16">
      {backend === "unreachable" ? <BackendUnreachable url={backendUrl} /> : null}
      {user ? (
        <HomeDashboard
          email={user.email}
          userId={user.id}
          twoFactors={user.aal === "aal2"}
          recent={recent}
        />
      ) : (
        <ProductIntro />
      )}
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
