import { index, type RouteConfig, route } from "@react-router/dev/routes";

export default [
  index("routes/home.tsx"),
  // Sign-in flows (issue 6).
  route("sign-up", "routes/sign-up.tsx"),
  route("sign-up/check-email", "routes/sign-up.check-email.tsx"),
  route("sign-in", "routes/sign-in.tsx"),
  route("sign-in/code", "routes/sign-in.code.tsx"),
  route("sign-in/check-email", "routes/sign-in.check-email.tsx"),
  route("auth/confirm", "routes/auth.confirm.tsx"),
  route("auth/callback", "routes/auth.callback.tsx"),
  route("forgot-password", "routes/forgot-password.tsx"),
  route("reset-password", "routes/reset-password.tsx"),
  route("sign-out", "routes/sign-out.tsx"),
  // Notes (issue 8).
  route("notes", "routes/notes._index.tsx"),
  route("notes/new", "routes/notes.new.tsx"),
  route("notes/:id", "routes/notes.$id.tsx"),
  route("notes/:id/edit", "routes/notes.$id.edit.tsx"),
  route("notes/:id/delete", "routes/notes.$id.delete.tsx"),
  // Account and security (issue 7): the layout draws the section nav; the profile page (issue 8)
  // is its index.
  route("account", "routes/account.tsx", [
    index("routes/account._index.tsx"),
    route("email", "routes/account.email.tsx"),
    route("password", "routes/account.password.tsx"),
    route("security", "routes/account.security.tsx"),
    route("identities", "routes/account.identities.tsx"),
    route("sessions", "routes/account.sessions.tsx"),
    route("activity", "routes/account.activity.tsx"),
  ]),
  // The second-factor challenge: signed in, but exempt from the aal2 rule it enforces.
  route("mfa", "routes/mfa.tsx"),
  // Anything else: a real 404 page rendered inside the layout (root loader and middleware run).
  route("*", "routes/not-found.tsx"),
] satisfies RouteConfig;
