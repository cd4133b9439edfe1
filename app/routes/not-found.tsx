import { notFound } from "../lib/http.server";

/** Catch-all route: unknown URLs get the root error boundary's 404 page, inside the layout. */
export function loader() {
  notFound();
}

export default function NotFound() {
  return null;
}
