import { Link } from "react-router";
import { listUrl } from "./list-url";

/**
 * "3 Nov 2026" in UTC, so the server's and the browser's renders agree. One formatter for every
 * date: toLocaleDateString() builds a new one at each call, which was a sixth of the Worker's CPU
 * for a list of 20 notes.
 */
const dateFormat = new Intl.DateTimeFormat("en-GB", {
  day: "numeric",
  month: "short",
  year: "numeric",
  timeZone: "UTC",
});

export function NoteDate({ iso, prefix }: { iso: string; prefix?: string }) {
  const date = new Date(iso);
  const text = dateFormat.format(date);
  return (
    <time dateTime={iso} title={date.toISOString()}>
      {prefix ? `${prefix} ` : ""}
      {text}
    </time>
  );
}

/** A tag as a link to the list filtered by it. */
export function TagLink({ name, active = false }: { name: string; active?: boolean }) {
  return (
    <Link
      to={listUrl({ tag: name })}
      aria-current={active ? "true" : undefined}
      className={`inline-flex items-center rounded-full px-2 py-0.5 text-xs font-medium ${
        active ? "bg-brand-600 text-white" : "bg-accent-subtle text-accent-strong hover:underline"
      }`}
    >
      {`#${name}`}
    </Link>
  );
}

export function ownerName(owner: { username: string | null; display_name: string | null } | null) {
  return owner?.display_name || (owner?.username ? `@${owner.username}` : "Someone");
}
