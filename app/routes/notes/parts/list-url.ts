/** The notes list's state, all in its URL so every view and page has a stable address. */
export type ListView = "active" | "archived" | "shared";

export interface ListParams {
  view: ListView;
  q: string;
  tag: string;
  page: number;
}

/** "/notes?view=archived&q=x&page=2", defaults left out. */
export function listUrl(params: Partial<ListParams>): string {
  const search = new URLSearchParams();
  if (params.view && params.view !== "active") search.set("view", params.view);
  if (params.q) search.set("q", params.q);
  if (params.tag) search.set("tag", params.tag);
  if (params.page && params.page > 1) search.set("page", String(params.page));
  const query = search.toString();
  return query ? `/notes?${query}` : "/notes";
}
