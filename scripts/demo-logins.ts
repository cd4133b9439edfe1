// The demo accounts supabase/seed.sql creates, as `npm run dev` prints them and the README lists
// them. tests/database/seed.test.ts signs in with exactly these, so this list cannot drift from
// the seed.
export const DEMO_LOGINS = [
  { email: "ada@example.com", password: "ada-lovelace-1815", name: "Ada Lovelace" },
  { email: "grace@example.com", password: "grace-hopper-1906", name: "Grace Hopper" },
] as const;
