import type { ReactNode } from "react";
import { Link } from "react-router";

/** The frame every sign-in page uses: a centred card with a heading, an intro and a footer. */
export function AuthCard({
  title,
  intro,
  children,
  footer,
}: {
  title: string;
  intro?: ReactNode;
  children: ReactNode;
  footer?: ReactNode;
}) {
  return (
    // No aria-labelledby: a titled region would also answer getByLabel("Code") on the code page.
    <section className="mx-auto w-full max-w-md py-10 sm:py-16">
      <div className="rounded-2xl border border-line bg-surface p-6 shadow-sm sm:p-8">
        <h1 id="auth-title" className="text-2xl font-semibold tracking-tight">
          {title}
        </h1>
        {intro ? <div className="mt-2 text-sm text-muted">{intro}</div> : null}
        <div className="mt-6">{children}</div>
      </div>
      {footer ? <div className="mt-6 text-center text-sm text-muted">{footer}</div> : null}
    </section>
  );
}

/** A plain text link in the sign-in pages' style. */
export const linkClass = "font-medium text-accent underline-offset-2 hover:underline";

/**
 * The link under a sign-in card ("Back to sign in", "Go to the home page"), after a short
 * question when there is one ("New to Edge Notes? Create an account").
 */
export function FooterLink({
  to,
  prompt,
  children,
}: {
  to: string;
  prompt?: string;
  children: ReactNode;
}) {
  const link = (
    <Link to={to} className={linkClass}>
      {children}
    </Link>
  );
  if (!prompt) return link;
  return (
    <>
      {prompt} {link}
    </>
  );
}
