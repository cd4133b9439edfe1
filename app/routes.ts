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
  // Account and security (issue 7). The profile page (issue 8) is the layout's index route:
  // index("routes/account._index.tsx").
  route("account", "routes/account.tsx", [
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
