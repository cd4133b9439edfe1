import { useEffect, useRef } from "react";
import {
  isRouteErrorResponse,
  Link,
  Links,
  Meta,
  Outlet,
  Scripts,
  ScrollRestoration,
  useLocation,
  useNavigation,
  useRouteLoaderData,
} from "react-router";
import type { Route } from "./+types/root";
import "./app.css";
import { NavigationProgress } from "./components/navigation-progress";
import { SiteHeader } from "./components/site-header";
import { StatusPage } from "./components/status-page";
import { ThemeSwitcher } from "./components/theme-switcher";
import { authMiddleware, getAuth } from "./lib/auth.server";
import { type AvatarSource, avatarSource } from "./lib/avatars";
import { offersImageTransformations } from "./lib/backend-features.server";
import { documentNonce } from "./lib/document-nonce";
import { type SupabaseEnv, toPublicEnv } from "./lib/env.server";
import { toSessionUser } from "./lib/session-user";
import { themeFromRequest } from "./lib/theme.server";
import { useBrowserSession } from "./lib/use-browser-session";
import { getSupabaseEnv } from "./lib/worker-context.server";

export const middleware: Route.MiddlewareFunction[] = [authMiddleware];

export async function loader({ request, context }: Route.LoaderArgs) {
  const { claims } = getAuth(context);
  const env = getSupabaseEnv(context);
  const user = toSessionUser(claims);
  return {
    env: toPublicEnv(env),
    user,
    theme: themeFromRequest(request),
    avatars: user ? await avatarsOf(env) : null,
  };
}

/**
 * Where the signed-in pages' avatars come from (the header, notes, people viewing): resized by
 * Storage where the project offers image transformations, else the originals. Asked once per
 * isolate (backend-features.server.ts), beside the page's own loaders; a page waits for the
 * answer at most PROBE_WAIT_MS (a slow or unreachable Storage never holds a page up), and
 * undecided counts as no.
 */
async function avatarsOf(env: SupabaseEnv): Promise<AvatarSource> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const transforms = await Promise.race([
    offersImageTransformations(env.url, env.publishableKey, fetch, env.timeoutMs),
    new Promise<null>((resolve) => {
      timer = setTimeout(() => resolve(null), PROBE_WAIT_MS);
    }),
  ]);
  clearTimeout(timer);
  return avatarSource(env.url, transforms === true);
}

const PROBE_WAIT_MS = 300;

export const meta: Route.MetaFunction = () => [
  { title: "Edge Notes" },
  { name: "description", content: "Notes that follow you, served from the edge." },
];

export function Layout({ children }: { children: React.ReactNode }) {
  const data = useRouteLoaderData<typeof loader>("root");
  const navigation = useNavigation();
  const main = useCommittedLocation();
  const nonce = documentNonce();
  const theme = data?.theme ?? "system";
  return (
    // The theme is on the first byte (from the cookie): app.css keys the colours on it.
    <html lang="en" className="h-full" data-theme={theme}>
      <head>
        <meta charSet="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <Meta />
        <link rel="icon" href="/favicon.svg" type="image/svg+xml" />
        <Links nonce={nonce} />
      </head>
      <body className="flex min-h-full flex-col">
        <a
          href="#main"
          className="sr-only focus:not-sr-only focus:absolute focus:left-4 focus:top-4 focus:z-50 focus:rounded focus:bg-surface focus:px-3 focus:py-2 focus:text-fg"
        >
          Skip to content
        </a>
        <NavigationProgress pending={navigation.state !== "idle"} />
        <SiteHeader user={data?.user ?? null} avatars={data?.avatars ?? null} />
        <main ref={main} id="main" className="mx-auto w-full max-w-5xl flex-1 px-4 sm:px-6">
          {children}
        </main>
        <footer className="border-t border-line py-6 text-xs text-muted">
          <div className="mx-auto flex w-full max-w-5xl flex-wrap items-center justify-between gap-3 px-4 sm:px-6">
            <p>Edge Notes · React Router on Cloudflare Workers · Supabase</p>
            <ThemeSwitcher theme={theme} />
          </div>
        </footer>
        <ScrollRestoration nonce={nonce} />
        <Scripts nonce={nonce} />
      </body>
    </html>
  );
}

/**
 * Marks `<main>` with the key of the location React has committed (`data-location-key`), once it
 * has: the URL and the router's state change before React renders a navigation (in a transition),
 * so the browser tests wait for this key to be the router's before they read the page. Set after
 * the commit rather than rendered, since the first key is the browser's and the server cannot know
 * it.
 */
function useCommittedLocation() {
  const main = useRef<HTMLElement>(null);
  const { key } = useLocation();
  useEffect(() => {
    if (main.current) main.current.dataset.locationKey = key;
  }, [key]);
  return main;
}

export default function App({ loaderData }: Route.ComponentProps) {
  useBrowserSession(loaderData.env, loaderData.user?.id ?? null);
  return <Outlet />;
}

export function ErrorBoundary({ error }: Route.ErrorBoundaryProps) {
  if (isRouteErrorResponse(error) && error.status === 404) {
    return (
      <StatusPage code="404" title="Page not found">
        <p>There is nothing at this address. Check the link, or start again from the home page.</p>
      </StatusPage>
    );
  }
  if (isRouteErrorResponse(error) && error.data?.code === "insufficient_aal") {
    return (
      <StatusPage code="403" title="Confirm it's you">
        <p data-testid="aal-required">{String(error.data.message)}</p>
        <p className="mt-4">
          <Link
            to={String(error.data.next)}
            className="font-medium text-accent underline-offset-2 hover:underline"
          >
            Enter your code
          </Link>
        </p>
      </StatusPage>
    );
  }
  if (isRouteErrorResponse(error) && typeof error.data?.message === "string") {
    return (
      <StatusPage code={String(error.status)} title={error.statusText || "Request failed"}>
        <p>{error.data.message}</p>
        {error.data.code ? (
          <p className="mt-2 font-mono text-xs">
            Error code: <span data-testid="error-code">{String(error.data.code)}</span>
          </p>
        ) : null}
      </StatusPage>
    );
  }
  if (isRouteErrorResponse(error)) {
    // Loaders that give up on the backend say which Supabase error it was, for support.
    const code = (error.data as { code?: unknown } | null)?.code;
    return (
      <StatusPage code={String(error.status)} title={error.statusText || "Request failed"}>
        <p>The server could not handle this request.</p>
        {typeof code === "string" ? (
          <p className="mt-2 font-mono text-xs">
            Error code: <span data-testid="error-code">{code}</span>
          </p>
        ) : null}
      </StatusPage>
    );
  }
  const detail = import.meta.env.DEV && error instanceof Error ? error.stack : undefined;
  return (
    <StatusPage code="500" title="Something went wrong">
      <p>An unexpected error stopped this page from loading. Try again in a moment.</p>
      {detail ? (
        <pre className="mt-6 overflow-x-auto rounded-lg bg-subtle p-4 text-left text-xs">
          {detail}
        </pre>
      ) : null}
    </StatusPage>
  );
}
