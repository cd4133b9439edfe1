import { Link } from "react-router";
import { AuthCard, FooterLink } from "../../../components/auth-card";
import type { LinkProblemPage } from "../../../lib/auth-errors";

/** The page for an email link or OAuth return that could not sign someone in. */
export function LinkProblemView({ page, code }: { page: LinkProblemPage; code?: string }) {
  return (
    <div data-testid="link-problem" data-problem={page.problem}>
      <AuthCard
        title={page.title}
        footer={
          page.action.href === "/" ? undefined : <FooterLink to="/">Go to the home page</FooterLink>
        }
      >
        <div className="space-y-3 text-sm text-muted">
          <p>{page.what}</p>
          <p className="font-medium text-ink-800 dark:text-ink-100">{page.todo}</p>
          <Link
            to={page.action.href}
            className="mt-2 inline-flex w-full items-center justify-center rounded-lg bg-brand-600 px-4 py-2.5 text-sm font-medium text-white hover:bg-brand-700"
          >
            {page.action.label}
          </Link>
          {code ? (
            <p className="pt-2 font-mono text-xs text-muted">
              Error code: <span data-testid="error-code">{code}</span>
            </p>
          ) : null}
        </div>
      </AuthCard>
    </div>
  );
}

/** A short confirmation page (e.g. the first half of a two-address email change). */
export function LinkNotice({ title, message }: { title: string; message: string }) {
  return (
    <div data-testid="link-notice">
      <AuthCard title={title} footer={<FooterLink to="/">Go to the home page</FooterLink>}>
        <p className="text-sm text-muted">{message}</p>
      </AuthCard>
    </div>
  );
}
