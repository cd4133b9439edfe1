/** The account sections, in the order the account layout lists them. */
export const ACCOUNT_SECTIONS = [
  { to: "/account", label: "Profile", end: true, blurb: "Your name and username." },
  { to: "/account/email", label: "Email", blurb: "The address you sign in with." },
  { to: "/account/password", label: "Password", blurb: "Change your password." },
  {
    to: "/account/security",
    label: "Two-factor",
    blurb: "An authenticator app as a second step when you sign in.",
  },
  {
    to: "/account/identities",
    label: "Linked accounts",
    blurb: "GitHub or Google accounts you can sign in with.",
  },
  { to: "/account/sessions", label: "Sessions", blurb: "Sign out your other devices." },
  { to: "/account/activity", label: "Activity", blurb: "Recent sign-ins and changes." },
] as const;
