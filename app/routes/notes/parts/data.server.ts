import type { PostgrestError, SupabaseClient } from "@supabase/supabase-js";
import type { Database } from "../../../lib/database.types";
import { backendFailure, notFound } from "../../../lib/http.server";
import type { Viewer } from "../../../lib/live.client";
import type { ListParams } from "./list-url";
import { plainExcerpt } from "./markdown.server";
import { ownerName } from "./note-meta";
import { PAGE_SIZE } from "./rules";
import { noteId } from "./schemas.server";

/**
 * Reading and writing notes with the request's Supabase client. Every query runs as the signed-in
 * user, so row-level security decides what exists: someone else's note and a note that never
 * existed are the same 404, with nothing on the page to tell them apart. A failure of the data
 * API is a 503 page (backendFailure).
 */
type Client = SupabaseClient<Database>;

/** The `:id` in the URL, or a 404 when it is not a note id at all. */
export function parseNoteId(value: string | undefined): string {
  const parsed = noteId.safeParse(value);
  if (!parsed.success) notFound();
  return parsed.data;
}

export interface NoteListItem {
  id: string;
  title: string;
  excerpt: string | null;
  pinned: boolean;
  archived: boolean;
  updated_at: string;
  owner_id: string;
  tags: { name: string }[];
  owner: {
    username: string | null;
    display_name: string | null;
    avatar_path: string | null;
  } | null;
}

export interface ListRequest extends ListParams {
  userId: string;
}

export interface NoteListPage {
  notes: NoteListItem[];
  total: number;
  /** The page starts past the last note: `notes` is empty, `total` says how many there are. */
  outOfRange: boolean;
  /** The user's tag names, for the filter (none in the shared view: tags are the owner's own). */
  tags: string[];
}

/**
 * One page of the list, pinned first, then the most recently edited; with the total count and the
 * user's tags: one request, list_notes() (supabase/migrations/20261128004400_note_list_in_one_call.sql),
 * which runs as the user, so RLS decides as it does for every other read.
 */
export async function listNotes(supabase: Client, request: ListRequest): Promise<NoteListPage> {
  const from = (request.page - 1) * PAGE_SIZE;
  const { data, error } = await supabase.rpc("list_notes", {
    shared_with_me: request.view === "shared",
    archived_view: request.view === "archived",
    search_words: request.q,
    tag_name: request.tag,
    page_offset: from,
    page_size: PAGE_SIZE,
  });
  if (error) backendFailure(error);
  const page = data as unknown as { total: number; notes: NoteListItem[]; tags: string[] };
  return {
    notes: page.notes.map((note) => withPlainExcerpt(request.userId, note)),
    total: page.total,
    // as the data API's ranges: an offset past the total is out of range, one at it is not
    outOfRange: from > page.total,
    tags: page.tags,
  };
}

export interface RecentNote {
  id: string;
  title: string;
  excerpt: string | null;
  updated_at: string;
  owner_id: string;
  owner: {
    username: string | null;
    display_name: string | null;
    avatar_path: string | null;
  } | null;
}

/**
 * The few notes edited last that the user can read (their own and those shared with them), not
 * archived, newest first: the home page's list, in one query.
 */
export async function recentNotes(
  supabase: Client,
  userId: string,
  limit: number,
): Promise<RecentNote[]> {
  const { data, error } = await supabase
    .from("notes")
    .select(
      "id, title, excerpt, updated_at, owner_id, owner:profiles!notes_owner_id_fkey(username, display_name, avatar_path)",
    )
    .eq("archived", false)
    .order("updated_at", { ascending: false })
    .order("id")
    .limit(limit);
  if (error) backendFailure(error);
  return (data as unknown as RecentNote[]).map((note) => withPlainExcerpt(userId, note));
}

/** A note's excerpt (its body's first 240 characters, Markdown) as the words alone. */
function withPlainExcerpt<T extends { excerpt: string | null }>(viewer: string, note: T): T {
  return { ...note, excerpt: note.excerpt ? plainExcerpt(viewer, note.excerpt) || null : null };
}

/** The user's tags, for the filter. */
export async function listTags(supabase: Client): Promise<string[]> {
  const { data: tags, error } = await supabase.from("tags").select("name").order("name");
  if (error) backendFailure(error);
  return tags.map((t) => t.name);
}

/** One note the user may read (their own or shared with them), or a 404. */
export async function loadNote(supabase: Client, id: string) {
  const { data: note, error } = await supabase
    .from("notes")
    .select(
      "id, title, body, pinned, archived, created_at, updated_at, owner_id, tags(name), owner:profiles!notes_owner_id_fkey(username, display_name, avatar_path), attachments(id, note_id, owner_id, name, size, content_type)",
    )
    .eq("id", id)
    .order("name", { referencedTable: "tags" })
    // files in the order they were attached (the same read: RLS on attachments decides)
    .order("created_at", { referencedTable: "attachments" })
    .order("id", { referencedTable: "attachments" })
    .maybeSingle();
  if (error) backendFailure(error);
  if (!note) notFound();
  return note;
}

/**
 * How a reader appears on a note's page ("Grace is also viewing"): their profile's display name,
 * else @username, else "Someone", and their picture.
 */
export async function viewerOf(supabase: Client, userId: string): Promise<Viewer> {
  const { data: profile, error } = await supabase
    .from("profiles")
    .select("username, display_name, avatar_path")
    .eq("id", userId)
    .maybeSingle();
  if (error) backendFailure(error);
  return { name: ownerName(profile), avatarPath: profile?.avatar_path ?? null };
}

/**
 * Saves a new title and body over the version the editor opened (`version`: its updated_at), in
 * one statement: the database changes nothing if the note has been saved since. "saved", or
 * "conflict" when it had been (the caller reads the newer version), "missing" when the note is
 * not the user's to edit, or the data API's refusal (a CHECK: the caller shows it on the form).
 */
export async function saveNoteVersion(
  supabase: Client,
  request: { id: string; ownerId: string; title: string; body: string; version: string },
): Promise<"saved" | "conflict" | "missing" | PostgrestError> {
  const { data: rows, error } = await supabase
    .from("notes")
    .update({ title: request.title, body: request.body })
    .eq("id", request.id)
    .eq("updated_at", request.version)
    .select("id");
  if (error) return error;
  if (rows.length > 0) return "saved";
  return (await ownsNote(supabase, request.id, request.ownerId)) ? "conflict" : "missing";
}

/** Whether the note exists and is the user's (one shared with them is readable, not theirs). */
export async function ownsNote(supabase: Client, id: string, userId: string): Promise<boolean> {
  const { data, error } = await supabase
    .from("notes")
    .select("id")
    .eq("id", id)
    .eq("owner_id", userId)
    .maybeSingle();
  if (error) backendFailure(error);
  return data !== null;
}

/**
 * Who an owner's note is shared with: the address typed when sharing, and the person's names.
 * Never their user id (the database does not let the owner select it); null when the note is not
 * the caller's (the database says so), so a page can ask beside loadNote() without waiting for it.
 */
export async function listShares(supabase: Client, id: string) {
  const { data: shares, error } = await supabase
    .rpc("list_note_shares", { note_id: id })
    .select("email, display_name, username, created_at");
  if (error?.code === "PT404") return null;
  if (error) backendFailure(error);
  return shares.map((share) => ({
    email: share.email,
    created_at: share.created_at,
    profile: { username: share.username ?? null, display_name: share.display_name ?? null },
  }));
}

/** The owner stops sharing a note with the address it is listed under; false if nothing matched. */
export async function unshareNote(
  supabase: Client,
  request: { id: string; ownerId: string; email: string },
): Promise<boolean> {
  // RLS lets the note's owner delete its shares, and the recipient their own: matching on the
  // owner keeps a recipient from using this form to leave (they have their own button).
  // No representation: the data API would return the primary key, and shared_with is not ours to
  // read; the count says whether anything went.
  const { count, error } = await supabase
    .from("note_shares")
    .delete({ count: "exact" })
    .match({ note_id: request.id, owner_id: request.ownerId, shared_with_email: request.email });
  if (error) backendFailure(error);
  return (count ?? 0) > 0;
}

/** The recipient removes a note shared with them from their list; false if nothing matched. */
export async function leaveSharedNote(
  supabase: Client,
  request: { id: string; userId: string },
): Promise<boolean> {
  // RLS lets a recipient delete only their own share; excluding the caller's own notes keeps the
  // owner from deleting every share of a note through this form.
  const { count, error } = await supabase
    .from("note_shares")
    .delete({ count: "exact" })
    .eq("note_id", request.id)
    .neq("owner_id", request.userId);
  if (error) backendFailure(error);
  return (count ?? 0) > 0;
}

/** Pin, unpin, archive or unarchive one of the user's notes; null if it is not theirs. */
export async function toggleNote(
  supabase: Client,
  id: string,
  intent: "pin" | "unpin" | "archive" | "unarchive",
) {
  const change =
    intent === "pin" || intent === "unpin"
      ? { pinned: intent === "pin" }
      : { archived: intent === "archive" };
  const { data: rows, error } = await supabase
    .from("notes")
    .update(change)
    .eq("id", id)
    .select("id, pinned, archived");
  if (error) backendFailure(error);
  return rows[0] ?? null;
}

/** Replaces a note's tags (the RPC checks ownership: someone else's note is a 404). */
export async function setNoteTags(supabase: Client, id: string, names: string[]) {
  const { error } = await supabase.rpc("set_note_tags", { note_id: id, tag_names: names });
  if (error?.code === "PT404") notFound();
  if (error) backendFailure(error);
}
