import { createHash } from "node:crypto";
import { Hono } from "hono";
import { readLimitedBody } from "../http/request-body.ts";
import { hashState, signProviderCode } from "./code.ts";
import type { ProviderContext } from "./context.ts";
import { KNOWN_PROVIDERS } from "./providers.ts";

/** The largest form accepted (bytes): the Auth API's body limit. */
const MAX_FORM_BYTES = 1024 * 1024;

/**
 * The local stand-in for an OAuth provider's sign-in page (GitHub, Google, ...), mounted at
 * /provider/<name>/authorize beside the Auth API. /authorize sends the browser here instead of to
 * the real provider; the person picks an account used before or types one (name, email, provider
 * id); the page answers /callback with a signed code, as the provider would. Plain HTML forms: it
 * works with JavaScript off and a test drives it with fetch.
 */
export function providerPageRoutes(ctx: ProviderContext): Hono {
  const app = new Hono();
  app.get("/:provider/authorize", async (c) => {
    const provider = c.req.param("provider");
    if (!isEnabled(ctx, provider)) return unknownProvider(provider);
    const state = c.req.query("state") ?? "";
    if (state === "") return missingState(provider);
    return page(200, await render(ctx, provider, state, {}));
  });
  app.post("/:provider/authorize", async (c) => {
    const provider = c.req.param("provider");
    if (!isEnabled(ctx, provider)) return unknownProvider(provider);
    let form: URLSearchParams;
    try {
      form = new URLSearchParams(await readLimitedBody(c.req.raw, MAX_FORM_BYTES));
    } catch {
      return page(413, shell(provider, "<p>That form was too large.</p>"));
    }
    const state = form.get("state") ?? "";
    if (state === "") return missingState(provider);
    const callback = new URL(`${ctx.externalUrl()}/callback`);
    if (form.get("decision") === "deny") {
      callback.searchParams.set("error", "access_denied");
      callback.searchParams.set(
        "error_description",
        "The user has denied your application access.",
      );
      callback.searchParams.set("state", state);
      return redirect(callback);
    }
    const values = {
      name: (form.get("name") ?? "").trim(),
      email: (form.get("email") ?? "").trim(),
      provider_id: (form.get("provider_id") ?? "").trim(),
      email_verified: form.get("email_verified") !== "false",
    };
    const errors = validate(values);
    if (Object.keys(errors).length > 0) {
      return page(400, await render(ctx, provider, state, { values, errors }));
    }
    const email = values.email.toLowerCase();
    const code = await signProviderCode(ctx, {
      provider,
      sub: values.provider_id || derivedId(provider, email),
      name: values.name || (email.split("@")[0] as string),
      email,
      email_verified: values.email_verified,
      state_hash: hashState(state),
    });
    callback.searchParams.set("code", code);
    callback.searchParams.set("state", state);
    return redirect(callback);
  });
  app.all("*", (c) => page(404, shell("", `<p>Nothing here: ${escape(c.req.path)}</p>`)));
  return app;
}

const LABELS: Record<string, string> = {
  github: "GitHub",
  google: "Google",
  gitlab: "GitLab",
  linkedin_oidc: "LinkedIn",
  slack_oidc: "Slack",
  x: "X",
};
const label = (provider: string) =>
  LABELS[provider] ?? provider.charAt(0).toUpperCase() + provider.slice(1);

function isEnabled(ctx: ProviderContext, provider: string): boolean {
  return KNOWN_PROVIDERS.includes(provider) && ctx.config.auth.external[provider]?.enabled === true;
}

interface FormValues {
  name: string;
  email: string;
  provider_id: string;
  email_verified: boolean;
}
type FormErrors = Partial<Record<"name" | "email" | "provider_id", string>>;

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

function validate(values: FormValues): FormErrors {
  const errors: FormErrors = {};
  if (values.email === "") errors.email = "Enter the account's email address.";
  else if (values.email.length > 255 || !EMAIL.test(values.email))
    errors.email = "Enter an email address like ada@example.com.";
  if (values.name.length > 255) errors.name = "Use at most 255 characters.";
  if (values.provider_id !== "" && !/^[A-Za-z0-9._@-]{1,255}$/.test(values.provider_id))
    errors.provider_id = "Use letters, digits and . _ @ - only (at most 255).";
  return errors;
}

/** A stable provider account id for an address, numeric like GitHub's and Google's. */
function derivedId(provider: string, email: string): string {
  const hex = createHash("sha256").update(`${provider}:${email}`).digest("hex");
  return BigInt(`0x${hex.slice(0, 15)}`).toString();
}

interface KnownAccount {
  provider_id: string;
  name: string;
  email: string;
}

/** Accounts of this provider that signed in locally before, newest first. */
async function knownAccounts(ctx: ProviderContext, provider: string): Promise<KnownAccount[]> {
  const { rows } = await ctx.db.query<{
    provider_id: string;
    identity_data: Record<string, unknown>;
  }>(
    `select provider_id, identity_data from auth.identities where provider = $1
     order by last_sign_in_at desc nulls last limit 10`,
    [provider],
  );
  return rows.map((r) => ({
    provider_id: r.provider_id,
    name: String(r.identity_data.name ?? r.identity_data.full_name ?? ""),
    email: String(r.identity_data.email ?? ""),
  }));
}

async function render(
  ctx: ProviderContext,
  provider: string,
  state: string,
  { values, errors = {} }: { values?: FormValues; errors?: FormErrors },
): Promise<string> {
  const name = label(provider);
  const action = `/provider/${provider}/authorize`;
  const stateField = `<input type="hidden" name="state" value="${escape(state)}">`;
  const accounts = await knownAccounts(ctx, provider);
  const accountList = accounts.length
    ? `<section aria-labelledby="known">
  <h2 id="known">Accounts used before</h2>
  <ul class="accounts">${accounts
    .map(
      (a) => `
    <li><form method="post" action="${action}">${stateField}
      <input type="hidden" name="provider_id" value="${escape(a.provider_id)}">
      <input type="hidden" name="name" value="${escape(a.name)}">
      <input type="hidden" name="email" value="${escape(a.email)}">
      <input type="hidden" name="email_verified" value="true">
      <button type="submit" name="decision" value="allow">Continue as ${escape(a.name || a.email)} <span>${escape(a.email)} · id ${escape(a.provider_id)}</span></button>
    </form></li>`,
    )
    .join("")}
  </ul>
</section>`
    : "";
  const v = values ?? { name: "", email: "", provider_id: "", email_verified: true };
  const field = (
    id: "name" | "email" | "provider_id",
    text: string,
    type: string,
    hint: string,
    extra = "",
  ) => {
    const error = errors[id];
    const describedBy = [hint ? `${id}-hint` : "", error ? `${id}-error` : ""]
      .filter(Boolean)
      .join(" ");
    return `<p class="field">
      <label for="${id}">${text}</label>
      <input id="${id}" name="${id}" type="${type}" value="${escape(v[id])}"${extra}${
        error ? ' aria-invalid="true"' : ""
      }${describedBy ? ` aria-describedby="${describedBy}"` : ""}>
      ${hint ? `<small id="${id}-hint">${hint}</small>` : ""}
      ${error ? `<strong class="error" id="${id}-error">${escape(error)}</strong>` : ""}
    </p>`;
  };
  const body = `${accountList}
<section aria-labelledby="other">
  <h2 id="other">${accounts.length ? "Another account" : "Choose an account"}</h2>
  <form method="post" action="${action}" novalidate>${stateField}
    ${field("name", "Name", "text", "", ' autocomplete="name"')}
    ${field("email", "Email", "email", "", ' autocomplete="email" required')}
    ${field("provider_id", `${escape(name)} account id`, "text", "Leave empty for a stable id made from the email.")}
    <p class="field">
      <label for="email_verified">${escape(name)} has verified this email</label>
      <select id="email_verified" name="email_verified">
        <option value="true"${v.email_verified ? " selected" : ""}>Yes</option>
        <option value="false"${v.email_verified ? "" : " selected"}>No</option>
      </select>
    </p>
    <button type="submit" name="decision" value="allow">Sign in with ${escape(name)}</button>
  </form>
</section>
<form method="post" action="${action}" class="cancel">${stateField}
  <button type="submit" name="decision" value="deny">Cancel and go back</button>
</form>`;
  return shell(provider, body, Object.keys(errors).length > 0);
}

function shell(provider: string, body: string, hasErrors = false): string {
  const name = provider ? label(provider) : "an OAuth provider";
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${hasErrors ? "Error: " : ""}Sign in with ${escape(name)} (local stand-in)</title>
<style>
  body { font: 16px/1.5 system-ui, sans-serif; margin: 0; background: #f6f7f9; color: #1b1f24; }
  main { max-width: 32rem; margin: 2rem auto; padding: 1.5rem; background: #fff; border-radius: 8px; box-shadow: 0 1px 3px #0002; }
  .notice { background: #fff4ce; border: 1px solid #e0c050; padding: .75rem; border-radius: 6px; }
  .field { display: grid; gap: .25rem; }
  input, select { font: inherit; padding: .4rem; border: 1px solid #8c959f; border-radius: 4px; }
  input[aria-invalid] { border-color: #cf222e; outline-color: #cf222e; }
  .error { color: #cf222e; font-weight: 600; }
  small { color: #57606a; }
  button { font: inherit; padding: .5rem .9rem; border-radius: 6px; border: 1px solid #1f883d; background: #1f883d; color: #fff; cursor: pointer; }
  .accounts { list-style: none; padding: 0; display: grid; gap: .5rem; }
  .accounts button { width: 100%; text-align: left; background: #fff; color: inherit; border-color: #8c959f; }
  .accounts span { display: block; color: #57606a; font-size: .875rem; }
  .cancel button { background: #fff; color: #1b1f24; border-color: #8c959f; margin-top: 1rem; }
</style>
</head>
<body>
<main>
<p class="notice" role="note"><strong>Local stand-in for ${escape(name)}.</strong> This page is served
by the local Supabase backend in place of ${escape(name)}'s sign-in, so OAuth works offline. Nothing is
sent to ${escape(name)}; the account you pick or type here is what the app receives.</p>
<h1>Sign in with ${escape(name)}</h1>
${body}
</main>
</body>
</html>`;
}

function missingState(provider: string): Response {
  return page(
    400,
    shell(
      provider,
      "<p>This sign-in request has no <code>state</code>, so it cannot return to the app. Start again from the app's sign-in page.</p>",
    ),
  );
}

function unknownProvider(provider: string): Response {
  return page(
    404,
    shell(
      "",
      `<p>The provider “${escape(provider)}” is not enabled. Turn it on with <code>[auth.external.${escape(provider)}] enabled = true</code> in supabase/config.toml.</p>`,
    ),
  );
}

function page(status: number, html: string): Response {
  return new Response(html, {
    status,
    headers: {
      "Content-Type": "text/html; charset=utf-8",
      "Cache-Control": "no-store",
      "X-Frame-Options": "DENY",
    },
  });
}

function redirect(url: URL): Response {
  return new Response(null, { status: 302, headers: { Location: url.toString() } });
}

function escape(value: string): string {
  return value
    .replace(/&/g, "&amp;")
    .replace(/</g, "&lt;")
    .replace(/>/g, "&gt;")
    .replace(/"/g, "&quot;")
    .replace(/'/g, "&#39;");
}
