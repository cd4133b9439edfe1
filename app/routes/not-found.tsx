import { data } from "react-router";

/** Catch-all route: unknown URLs get the root error boundary's 404 page, inside the layout. */
export function loader() {
  throw data(null, { status: 404, statusText: "Not Found" });
}

export default function NotFound() {
  return null;
}
