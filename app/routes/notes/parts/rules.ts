/**
 * The limits the database enforces on notes and tags (CHECK constraints in supabase/migrations),
 * shared by the server's validation and the forms' hints.
 */
export const TITLE_MAX = 200;
export const BODY_MAX = 20_000;
export const TAGS_MAX = 10;
export const TAG_PATTERN = /^[a-z0-9][a-z0-9_-]{0,31}$/;
export const SEARCH_MAX = 200;
export const PAGE_SIZE = 20;

export const TAG_RULES = "Up to 10, separated by commas: letters, digits, - and _.";
