import type { ReactNode } from "react";
import { Link } from "react-router";

/** A full-width message page: errors (404, 500) and other states a user cannot fix inline. */
export function StatusPage({
  code,
  title,
  children,
}: {
  code: string;
  title: string;
  children: ReactNode;
}) {
  return (
    <section className="mx-auto max-w-xl py-16 text-center sm:py-24" aria-labelledby="status-title">
      <p className="font-mono text-sm font-semibold text-accent">{code}</p>
      <h1 id="status-title" className="mt-3 text-3xl font-semibold tracking-tight sm:text-4xl">
        {title}
      </h1>
      <div className="mt-4 text-muted">{children}</div>
      <Link
        to="/"
        className="mt-8 inline-flex items-center rounded-lg bg-brand-600 px-4 py-2 text-sm font-medium text-white hover:bg-brand-700"
      >
        Go to the home page
      </Link>
    </section>
  );
}
