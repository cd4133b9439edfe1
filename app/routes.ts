import { index, type RouteConfig, route } from "@react-router/dev/routes";

export default [
  index("routes/home/index.tsx"),

  // Signing up, in and out; the pages email links and OAuth come back to.
  route("sign-up", "routes/auth/sign-up.tsx"),
  route("sign-up/check-email", "routes/auth/sign-up.check-email.tsx"),
  route("sign-in", "routes/auth/sign-in.tsx"),
  route("sign-in/code", "routes/auth/sign-in.code.tsx"),
  route("sign-in/check-email", "routes/auth/sign-in.check-email.tsx"),
  route("sign-in/passkey", "routes/auth/sign-in.passkey.ts"),
  route("auth/confirm", "routes/auth/confirm.tsx"),
  route("auth/callback", "routes/auth/callback.tsx"),
  route("forgot-password", "routes/auth/forgot-password.tsx"),
  route("reset-password", "routes/auth/reset-password.tsx"),
  route("sign-out", "routes/auth/sign-out.tsx"),
  // The second-factor challenge: signed in, but exempt from the aal2 rule it enforces.
  route("mfa", "routes/auth/mfa.tsx"),

  // The colour theme (a form post that sets a cookie and goes back).
  route("theme", "routes/theme.tsx"),

  // Notes.
  route("notes", "routes/notes/index.tsx"),
  route("notes/new", "routes/notes/new.tsx"),
  route("notes/:id", "routes/notes/note.tsx"),
  route("notes/:id/edit", "routes/notes/edit.tsx"),
  route("notes/:id/delete", "routes/notes/delete.tsx"),
  route("notes/:id/attachments", "routes/notes/attachments.tsx"),

  // Account: the layout draws the section nav; the profile is its index.
  route("account", "routes/account/layout.tsx", [
    index("routes/account/profile.tsx"),
    route("email", "routes/account/email.tsx"),
    route("password", "routes/account/password.tsx"),
    route("security", "routes/account/security.tsx"),
    route("identities", "routes/account/identities.tsx"),
    route("sessions", "routes/account/sessions.tsx"),
    route("activity", "routes/account/activity.tsx"),
  ]),

  // Adding a passkey: the JSON steps /account/security's script takes (no page).
  route("account/passkeys", "routes/account/passkeys.ts"),
  // The profile's picture: a form post (upload or remove), back to the profile (no page).
  route("account/avatar", "routes/account/avatar.ts"),

  // Anything else: a real 404 page rendered inside the layout (root loader and middleware run).
  route("*", "routes/not-found.tsx"),
] satisfies RouteConfig;
