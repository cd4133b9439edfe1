import { type MouseEvent, type ReactNode, useCallback } from "react";
import { useNavigate } from "react-router";

/**
 * A link inside a card of the list (a note's title, its tags): a plain anchor, as `<Link>` renders
 * it and as it works without JavaScript; once JavaScript runs, the list's one click handler
 * (useCardLinks) sends a plain click through the router instead of loading the page again. A page
 * of 20 cards has 60 of them; as `<Link>`s, each about twenty hooks on the server, they were about
 * a fourteenth of `/notes`' CPU in the Worker (docs/decisions/043-notes-list-cpu.md).
 */
export function CardLink({
  to,
  className,
  children,
  "aria-current": current,
}: {
  to: string;
  className: string;
  children: ReactNode;
  "aria-current"?: "true";
}) {
  return (
    // data-discover, as <Link> renders it: React Router finds the route's code ahead of the click
    <a
      href={to}
      className={className}
      aria-current={current}
      data-discover="true"
      data-card-link=""
    >
      {children}
    </a>
  );
}

/**
 * The click handler for an element holding CardLinks: what `<Link>` does on a click, once for the
 * whole list. A click with a modifier key or another button, or on a link to another window or
 * site, is left to the browser (a new tab, a download); a link to the page already shown replaces
 * its history entry instead of adding one, as `<Link>` does. Enter on a focused link is a click too.
 */
export function useCardLinks(): (event: MouseEvent<HTMLElement>) => void {
  const navigate = useNavigate();
  return useCallback(
    (event: MouseEvent<HTMLElement>) => {
      if (event.defaultPrevented || event.button !== 0) return;
      if (event.metaKey || event.altKey || event.ctrlKey || event.shiftKey) return;
      const link =
        event.target instanceof Element ? event.target.closest("a[data-card-link]") : null;
      if (!(link instanceof HTMLAnchorElement) || !event.currentTarget.contains(link)) return;
      if ((link.target && link.target !== "_self") || link.origin !== window.location.origin)
        return;
      event.preventDefault();
      const to = `${link.pathname}${link.search}${link.hash}`;
      const here = `${window.location.pathname}${window.location.search}${window.location.hash}`;
      void navigate(to, { replace: to === here });
    },
    [navigate],
  );
}
