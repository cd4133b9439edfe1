-- What other people see of a user changes only at aal2 (decision 004): the profile's display name
-- and picture are written through the data API, under the profile's row-level security, and no
-- longer copied from the user's metadata.
--
-- Until now the trigger on_auth_user_metadata_updated (20261122000100_profiles.sql, widened by
-- 20261128002000_avatars.sql) mirrored `display_name` and `avatar_path` from auth.users'
-- raw_user_meta_data into public.profiles as a security definer. Auth lets any session edit its
-- own user metadata (`PUT /auth/v1/user {"data": …}`), an aal1 session of a user with a factor
-- included, on hosted Supabase as locally, and that cannot be changed. So someone with the
-- password alone could change the name and picture the user's share partners see, past the
-- restrictive aal2 policy every table carries. Now:
--
-- 1. The trigger and its function are gone. Nothing copies metadata into a public table after
--    sign-up. At sign-up, private.handle_new_user() still takes the name the sign-up form (or an
--    OAuth provider) put in the metadata: no session of the user exists before it, so there is no
--    factor to skip.
-- 2. The owner updates `display_name` and `avatar_path` of their own row through the data API, as
--    the username already was: "profiles: owner updates" and the three restrictive rules (aal2
--    once a factor exists, no anonymous users, a live session) decide. The Realtime broadcast
--    (20261128003800_live_profile_names.sql) fires on those updates as before.
-- 3. The rules the trigger applied on the way in are checks now, since the API writes the row
--    directly: a name of 1–100 characters with no leading or trailing spaces (the length check is
--    20261122000100's), a picture in the owner's own folder in the bucket's shape (the check is
--    20261128002000's).
--
-- The app may still keep `display_name` and `avatar_path` in the user's metadata, for its own
-- header (the access token carries them, decision 037): that copy is the user's own to show
-- themselves, and nothing the database shows anyone else reads it.

drop trigger on_auth_user_metadata_updated on auth.users;
drop function private.sync_display_name();

alter table public.profiles
  add constraint profiles_display_name_trimmed check (display_name = btrim(display_name));

grant update (display_name, avatar_path) on table public.profiles to authenticated;

comment on table public.profiles is
  'One per user; created on sign-up (display name from the sign-up metadata), then written by its owner through the API under RLS (aal2 once a factor exists).';
comment on column public.profiles.display_name is
  'What share partners see: written by the owner through the API (never from user metadata after sign-up).';
comment on column public.profiles.avatar_path is
  'The current picture in the avatars bucket (<id>/<version>.<ext>), written by the owner through the API.';
