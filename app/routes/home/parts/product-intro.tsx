import { Link } from "react-router";

/**
 * The signed-out home page: what Edge Notes is, what it keeps about you and who can read it, and
 * the way in. Static: it needs no data, so the page makes no call to the backend.
 */
export function ProductIntro() {
  return (
    <div data-testid="signed-out">
      <section aria-labelledby="home-title" className="max-w-2xl">
        <h1 id="home-title" className="text-4xl font-semibold tracking-tight sm:text-5xl">
          Your notes, close to you.
        </h1>
        <p className="mt-4 text-lg text-muted">
          Write notes in Markdown, tag them, pin the ones that matter and share one with a single
          person when you need to. Pages are rendered on Cloudflare's edge, near you; your notes
          live in a Postgres database that only lets you read what is yours.
        </p>
        <div className="mt-6 flex flex-wrap gap-3">
          <Link
            to="/sign-up"
            className="inline-flex items-center rounded-lg bg-brand-600 px-5 py-2.5 text-sm font-medium text-white hover:bg-brand-700"
          >
            Create an account
          </Link>
          <Link
            to="/sign-in"
            className="inline-flex items-center rounded-lg border border-control px-5 py-2.5 text-sm font-medium hover:bg-subtle"
          >
            Sign in
          </Link>
        </div>
        <p className="mt-3 text-sm text-muted">You are signed out.</p>
      </section>

      <section aria-labelledby="privacy-title" className="mt-12">
        <h2 id="privacy-title" className="text-2xl font-semibold tracking-tight">
          Private by design
        </h2>
        <ul className="mt-5 grid gap-4 sm:grid-cols-2">
          <Fact title="What is stored">
            Your email address and a hash of your password (never the password itself), your notes,
            their tags, the addresses you share with, and a log of your account's security events
            (sign-ins, password changes, with the browser's name) that only you can see.
          </Fact>
          <Fact title="Who can read your notes">
            Only you. The database checks every query with row-level security, as you, so a note is
            out of reach of other accounts even if the app had a bug.
          </Fact>
          <Fact title="Sharing">
            A note you share is shown only to the person whose address you chose, read-only. You can
            stop sharing at any time, and they can remove it from their list.
          </Fact>
          <Fact title="No tracking">
            No analytics, no ads, no third-party scripts. The only cookies keep you signed in and
            remember your colour theme.
          </Fact>
        </ul>
        <p className="mt-5 text-sm text-muted">
          Want more? Add an authenticator app for two-factor sign-in, and see and end your other
          sessions from your account.
        </p>
      </section>
    </div>
  );
}

function Fact({ title, children }: { title: string; children: React.ReactNode }) {
  return (
    <li className="rounded-2xl border border-line bg-surface p-5 shadow-sm">
      <h3 className="font-semibold">{title}</h3>
      <p className="mt-2 text-sm text-muted">{children}</p>
    </li>
  );
}
