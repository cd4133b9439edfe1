import type { ReactNode } from "react";

/** A titled card on the account pages: what the section is for, then its forms or lists. */
export function AccountPanel({
  title,
  description,
  children,
  tone = "default",
}: {
  title: string;
  description?: ReactNode;
  children: ReactNode;
  tone?: "default" | "danger";
}) {
  const border = tone === "danger" ? "border-red-200 dark:border-red-900" : "border-line";
  return (
    <section className={`rounded-2xl border bg-surface p-5 shadow-sm sm:p-6 ${border}`}>
      <h2 className="text-lg font-semibold tracking-tight">{title}</h2>
      {description ? <div className="mt-1 text-sm text-muted">{description}</div> : null}
      <div className="mt-5">{children}</div>
    </section>
  );
}

/** The page heading inside the account layout. */
export function AccountHeading({ title, intro }: { title: string; intro?: ReactNode }) {
  return (
    <div className="mb-6">
      <h1 id="account-page-title" className="text-2xl font-semibold tracking-tight">
        {title}
      </h1>
      {intro ? <p className="mt-1 text-sm text-muted">{intro}</p> : null}
    </div>
  );
}
