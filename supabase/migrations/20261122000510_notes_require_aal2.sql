-- Multi-factor authentication for the notes data: once a user has a verified second factor, their
-- profile, notes, tags and shares are only reachable with an aal2 session. The app sends such a
-- session to the /mfa challenge first; this restrictive policy makes the rule hold for any client
-- (a cookie's user object is client-controlled; the JWT's `aal` claim is signed by the server).
-- private.aal_satisfied() is defined with the security events (20261122000500).

create policy "Accounts with a second factor need aal2"
  on public.profiles as restrictive for all to authenticated
  using ((select private.aal_satisfied()))
  with check ((select private.aal_satisfied()));

create policy "Accounts with a second factor need aal2"
  on public.notes as restrictive for all to authenticated
  using ((select private.aal_satisfied()))
  with check ((select private.aal_satisfied()));

create policy "Accounts with a second factor need aal2"
  on public.tags as restrictive for all to authenticated
  using ((select private.aal_satisfied()))
  with check ((select private.aal_satisfied()));

create policy "Accounts with a second factor need aal2"
  on public.note_tags as restrictive for all to authenticated
  using ((select private.aal_satisfied()))
  with check ((select private.aal_satisfied()));

create policy "Accounts with a second factor need aal2"
  on public.note_shares as restrictive for all to authenticated
  using ((select private.aal_satisfied()))
  with check ((select private.aal_satisfied()));
