-- Demo data: two confirmed accounts to sign in with, a few notes, one note shared.
--
--   ada@example.com    ada-lovelace-1815    Ada Lovelace (owns the notes)
--   grace@example.com  grace-hopper-1906    Grace Hopper (one of Ada's notes is shared with her)
--
-- Applied once to a fresh database: by `npm run local` / `npm run dev` (the local backend) and
-- after `npm run local:reset`, and by `supabase db reset` on a real project (config.toml
-- [db.seed]). Plain SQL that runs on both: fixed ids, the rows GoTrue itself writes for an email
-- sign-up, passwords hashed with pgcrypto's bcrypt as GoTrue stores them (cost 10, `$2a$`).
-- The addresses are public: never seed a hosted project with these accounts.

-- The accounts, as GoTrue writes a confirmed email user. Its token columns are Go strings: NULL
-- there breaks every later sign-in ("converting NULL to string is unsupported"), so they are ''.
insert into auth.users (
  instance_id, id, aud, role, email, encrypted_password, email_confirmed_at, last_sign_in_at,
  raw_app_meta_data, raw_user_meta_data, created_at, updated_at,
  confirmation_token, recovery_token, email_change_token_new, email_change,
  email_change_token_current, phone_change, phone_change_token, reauthentication_token
)
values
  (
    '00000000-0000-0000-0000-000000000000', '11111111-1111-4111-8111-111111111111',
    'authenticated', 'authenticated', 'ada@example.com',
    extensions.crypt('ada-lovelace-1815', extensions.gen_salt('bf', 10)), now(), null,
    '{"provider": "email", "providers": ["email"]}',
    '{"display_name": "Ada Lovelace", "email_verified": true}', now(), now(),
    '', '', '', '', '', '', '', ''
  ),
  (
    '00000000-0000-0000-0000-000000000000', '22222222-2222-4222-8222-222222222222',
    'authenticated', 'authenticated', 'grace@example.com',
    extensions.crypt('grace-hopper-1906', extensions.gen_salt('bf', 10)), now(), null,
    '{"provider": "email", "providers": ["email"]}',
    '{"display_name": "Grace Hopper", "email_verified": true}', now(), now(),
    '', '', '', '', '', '', '', ''
  );

-- Each account's email identity (provider_id is the user id for the email provider).
insert into auth.identities (
  id, provider_id, user_id, identity_data, provider, last_sign_in_at, created_at, updated_at
)
values
  (
    '11111111-1111-4111-8111-1111111111a1', '11111111-1111-4111-8111-111111111111',
    '11111111-1111-4111-8111-111111111111',
    '{"sub": "11111111-1111-4111-8111-111111111111", "email": "ada@example.com", "email_verified": true, "phone_verified": false}',
    'email', null, now(), now()
  ),
  (
    '22222222-2222-4222-8222-2222222222a2', '22222222-2222-4222-8222-222222222222',
    '22222222-2222-4222-8222-222222222222',
    '{"sub": "22222222-2222-4222-8222-222222222222", "email": "grace@example.com", "email_verified": true, "phone_verified": false}',
    'email', null, now(), now()
  );

-- Profiles come from the on_auth_user_created trigger (display name from the metadata); the
-- usernames are the demo's own choice.
update public.profiles set username = 'ada' where id = '11111111-1111-4111-8111-111111111111';
update public.profiles set username = 'grace' where id = '22222222-2222-4222-8222-222222222222';

-- Ada's notes, Markdown bodies (the oldest first; the first one is pinned).
insert into public.notes (id, owner_id, title, body, pinned, created_at, updated_at)
values
  (
    '0a000000-0000-4000-8000-000000000001', '11111111-1111-4111-8111-111111111111',
    'Welcome to Edge Notes',
    E'Notes are **private** until you share them.\n\n- Write in *Markdown*: lists, **bold**, `code`, [links](https://supabase.com/docs)\n- Pin what matters, archive what is done\n- Tag notes to find them again\n\nOne of these notes is shared with Grace: she can read it, not change it.',
    true, now() - interval '3 days', now() - interval '3 days'
  ),
  (
    '0a000000-0000-4000-8000-000000000002', '11111111-1111-4111-8111-111111111111',
    'Shopping list',
    E'For the weekend:\n\n- **bread**\n- milk\n- 6 eggs\n- coffee (the **dark** roast)\n\n> Check the market first.',
    false, now() - interval '2 days', now() - interval '2 days'
  ),
  (
    '0a000000-0000-4000-8000-000000000003', '11111111-1111-4111-8111-111111111111',
    'Notes on the Analytical Engine',
    E'## Note G\n\nThe engine can compute the **Bernoulli numbers**: see [Note G on Wikipedia](https://en.wikipedia.org/wiki/Note_G).\n\n1. Operations cards\n2. Variable cards\n3. Results on the store\n\nShared with Grace for her review.',
    false, now() - interval '1 day', now() - interval '1 day'
  ),
  (
    '0a000000-0000-4000-8000-000000000004', '11111111-1111-4111-8111-111111111111',
    'Reading list',
    E'- *Sketch of the Analytical Engine*, L. F. Menabrea\n- [The Thrilling Adventures of Lovelace and Babbage](https://sydneypadua.com)',
    false, now() - interval '1 hour', now() - interval '1 hour'
  );

-- Ada's tags (names as the app stores them: lower-case).
insert into public.tags (id, owner_id, name)
values
  ('0b000000-0000-4000-8000-000000000001', '11111111-1111-4111-8111-111111111111', 'home'),
  ('0b000000-0000-4000-8000-000000000002', '11111111-1111-4111-8111-111111111111', 'research'),
  ('0b000000-0000-4000-8000-000000000003', '11111111-1111-4111-8111-111111111111', 'books');

insert into public.note_tags (note_id, tag_id)
values
  ('0a000000-0000-4000-8000-000000000002', '0b000000-0000-4000-8000-000000000001'),
  ('0a000000-0000-4000-8000-000000000003', '0b000000-0000-4000-8000-000000000002'),
  ('0a000000-0000-4000-8000-000000000004', '0b000000-0000-4000-8000-000000000002'),
  ('0a000000-0000-4000-8000-000000000004', '0b000000-0000-4000-8000-000000000003');

-- "Notes on the Analytical Engine" is shared from Ada to Grace (read-only).
insert into public.note_shares (note_id, owner_id, shared_with, shared_with_email)
values (
  '0a000000-0000-4000-8000-000000000003', '11111111-1111-4111-8111-111111111111',
  '22222222-2222-4222-8222-222222222222', 'grace@example.com'
);
