import { adminClient } from "../../support/backend.ts";
import type { BrowserLess, Visit } from "./browser-less.ts";

/** The note id a visit landed on (/notes/<uuid>), or throws. */
export function noteIdOf(visit: Visit): string {
  const match = /\/notes\/([0-9a-f-]{36})$/.exec(new URL(visit.url).pathname);
  if (!match?.[1]) throw new Error(`not on a note page: ${visit.status} ${visit.url}`);
  return match[1];
}

/** Creates a note through the app's own form (JavaScript off) and returns its id. */
export async function createNote(
  browser: BrowserLess,
  fields: { title: string; body?: string; tags?: string },
): Promise<string> {
  const visit = await browser.post("/notes/new", { body: "", tags: "", ...fields });
  return noteIdOf(visit);
}

/**
 * The version an edit form of the note carries (its hidden `version`: the note's updated_at when
 * the page was rendered), as a browser that opened /notes/:id/edit would post it back.
 */
export async function editVersion(browser: BrowserLess, id: string): Promise<string> {
  const page = await browser.get(`/notes/${id}/edit`);
  const match = /<input[^>]*name="version"[^>]*value="([^"]*)"/.exec(page.body);
  if (!match?.[1]) throw new Error(`no version on /notes/${id}/edit (${page.status})`);
  return match[1];
}

/**
 * Many notes for one user at once, through the data API with the service role (the owner is set
 * explicitly, as only the service role may). `minutesAgo` spreads their edit times apart.
 */
export async function seedNotes(
  ownerId: string,
  notes: {
    title: string;
    body?: string;
    pinned?: boolean;
    archived?: boolean;
    minutesAgo: number;
  }[],
): Promise<string[]> {
  const rows = notes.map(({ minutesAgo, ...note }) => {
    const at = new Date(Date.now() - minutesAgo * 60_000).toISOString();
    return {
      body: "",
      pinned: false,
      archived: false,
      ...note,
      owner_id: ownerId,
      created_at: at,
      updated_at: at,
    };
  });
  const { data, error } = await adminClient().from("notes").insert(rows).select("id");
  if (error) throw error;
  return data.map((row) => row.id as string);
}

/** Titles of the note cards on a list page, in order. */
export function cardTitles(body: string): string[] {
  const cards = body.split('data-testid="note-card"').slice(1);
  return cards.map(
    (card) => /<a [^>]*href="\/notes\/[^"]+"[^>]*>([^<]*)<\/a>/.exec(card)?.[1] ?? "",
  );
}

export async function noteRow(id: string) {
  const { data, error } = await adminClient().from("notes").select("*").eq("id", id).maybeSingle();
  if (error) throw error;
  return data as {
    id: string;
    owner_id: string;
    title: string;
    body: string;
    pinned: boolean;
    archived: boolean;
  } | null;
}
