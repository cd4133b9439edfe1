import { useEffect, useRef } from "react";
import { NavLink, Outlet, useLocation } from "react-router";
import { requireUser } from "../../lib/guards.server";
import { noStoreHeaders } from "../../lib/http.server";
import type { Route } from "./+types/layout";
import { ACCOUNT_SECTIONS } from "./parts/nav";

/** Every account page names the signed-in person: never kept by a shared cache. */
export const headers: Route.HeadersFunction = noStoreHeaders;

export const meta: Route.MetaFunction = () => [{ title: "Account · Edge Notes" }];

/**
 * The account area: signed-in users only (and aal2 once they have a second factor, through
 * requireUser). Each section is its own route; this layout only draws the section navigation.
 */
export function loader({ request, context }: Route.LoaderArgs) {
  requireUser(request, context);
  return null;
}

export default function AccountLayout() {
  const list = useRef<HTMLUListElement>(null);
  const { pathname } = useLocation();
  // On phones the sections scroll sideways: bring the current one into view.
  useEffect(() => {
    const current = list.current?.querySelector<HTMLElement>('[aria-current="page"]');
    const ul = list.current;
    if (!current || !ul || ul.scrollWidth <= ul.clientWidth) return;
    const left = current.offsetLeft - ul.offsetLeft;
    if (left < ul.scrollLeft || left + current.offsetWidth > ul.scrollLeft + ul.clientWidth) {
      ul.scrollLeft = Math.max(0, left - 16);
    }
  }, [pathname]);
  return (
    <div className="py-8 sm:py-12">
      <div className="grid grid-cols-[minmax(0,1fr)] gap-6 md:grid-cols-[12rem_minmax(0,1fr)] md:gap-10">
        <nav aria-label="Account sections" className="min-w-0 md:pt-1">
          <p className="mb-3 hidden text-xs font-semibold uppercase tracking-wide text-muted md:block">
            Account
          </p>
          <ul
            ref={list}
            className="-mx-4 flex gap-1 overflow-x-auto px-4 pb-1 text-sm md:mx-0 md:flex-col md:overflow-visible md:px-0"
          >
            {ACCOUNT_SECTIONS.map((section) => (
              <li key={section.to} className="shrink-0">
                <NavLink
                  to={section.to}
                  end={"end" in section}
                  prefetch="intent"
                  className={({ isActive }) =>
                    `block rounded-lg px-3 py-1.5 font-medium whitespace-nowrap transition-colors ${
                      isActive
                        ? "bg-brand-50 text-brand-700 dark:bg-ink-800 dark:text-brand-300"
                        : "text-ink-600 hover:bg-ink-100 hover:text-ink-900 dark:text-ink-400 dark:hover:bg-ink-800 dark:hover:text-ink-50"
                    }`
                  }
                >
                  {section.label}
                </NavLink>
              </li>
            ))}
          </ul>
        </nav>
        <div className="min-w-0">
          <Outlet />
        </div>
      </div>
    </div>
  );
}
