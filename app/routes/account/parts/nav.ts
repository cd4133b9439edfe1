/** The account sections, in the order the account layout lists them. */
export const ACCOUNT_SECTIONS = [
  { to: "/account", label: "Profile", end: true },
  { to: "/account/email", label: "Email" },
  { to: "/account/password", label: "Password" },
  {
    to: "/account/security",
    label: "Security",
  },
  {
    to: "/account/identities",
    label: "Linked accounts",
  },
  { to: "/account/sessions", label: "Sessions" },
  { to: "/account/activity", label: "Activity" },
] as const;
