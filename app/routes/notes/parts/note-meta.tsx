import { Link } from "react-router";
import { CardLink } from "./card-links";
import { listUrl } from "./list-url";

const MONTHS = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"];

/**
 * "3 Nov 2026", in UTC, written out by hand. The server's and the browser's renders must agree,
 * and Intl's month names do not across runtimes (one ICU says "Sept", another "Sep"); formatting
 * with Intl was also most of a card's date cost in the Worker (a twentieth of /notes' CPU).
 */
export function formatDay(date: Date): string {
  return `${date.getUTCDate()} ${MONTHS[date.getUTCMonth()]} ${date.getUTCFullYear()}`;
}

export function NoteDate({ iso, prefix }: { iso: string; prefix?: string }) {
  const date = new Date(iso);
  const text = formatDay(date);
  return (
    <time dateTime={iso} title={date.toISOString()}>
      {prefix ? `${prefix} ${text}` : text}
    </time>
  );
}

/** A tag as a link to the list filtered by it; `inCard`: in a card of the list (card-links.tsx). */
export function TagLink({
  name,
  active = false,
  inCard = false,
}: {
  name: string;
  active?: boolean;
  inCard?: boolean;
}) {
  const props = {
    to: listUrl({ tag: name }),
    "aria-current": active ? ("true" as const) : undefined,
    className: `inline-flex items-center rounded-full px-2 py-0.5 text-xs font-medium ${
      active ? "bg-brand-600 text-white" : "bg-accent-subtle text-accent-strong hover:underline"
    }`,
  };
  return inCard ? (
    <CardLink {...props}>{`#${name}`}</CardLink>
  ) : (
    <Link {...props}>{`#${name}`}</Link>
  );
}

export function ownerName(owner: { username: string | null; display_name: string | null } | null) {
  return owner?.display_name || (owner?.username ? `@${owner.username}` : "Someone");
}
