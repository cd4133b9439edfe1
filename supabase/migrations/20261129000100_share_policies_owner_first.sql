-- The two policies that let a recipient read a shared note and its owner's profile ask a security
-- definer helper (private.note_shared_with_me, private.shares_a_note_with_me: 20261122000600) that
-- Postgres cannot inline, so it is called once per row the policy looks at. Postgres joins a
-- table's permissive policies with OR in the order it keeps them (the recipient's first here), and
-- evaluates an OR from left to right, so reading one's own notes called the helper for every one of
-- them, although the owner's policy already lets them through: 30 notes, 30 lookups in note_shares,
-- in every list, note page and tag join (note_tags' policies read notes).
--
-- Each recipient policy now says first what it is for: a row someone else owns. A share is never
-- with the note's owner (note_shares_not_with_owner), so the rows each policy lets through are the
-- same as before; the helper is no longer called for the caller's own rows. Measured in PGlite
-- (a user with 30 notes, list_notes() for a page of 20, 100 calls in a loop): 3.7-4.1 ms a call
-- before, 2.5-2.9 after. tests/database/notes-rls-matrix.test.ts counts the helper's calls.
drop policy "notes: recipient reads" on public.notes;
create policy "notes: recipient reads" on public.notes
  for select to authenticated
  using (owner_id <> (select auth.uid()) and private.note_shared_with_me(id));

drop policy "profiles: recipients read the sharer's profile" on public.profiles;
create policy "profiles: recipients read the sharer's profile" on public.profiles
  for select to authenticated
  using (id <> (select auth.uid()) and private.shares_a_note_with_me(id));
