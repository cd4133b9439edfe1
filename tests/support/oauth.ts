// Follows an OAuth sign-in the way a browser would, without cookies: /authorize -> the local
// provider page (its HTML form, submitted like a person would) -> /callback -> redirect_to.

export interface ProviderAccountInput {
  name?: string;
  email: string;
  provider_id?: string;
  email_verified?: boolean;
}

type Fetch = (input: string, init?: RequestInit) => Promise<Response>;

const manual = (fetcher: Fetch, url: string, init: RequestInit = {}) =>
  fetcher(url, { ...init, redirect: "manual" });

/** GET `url` and expect a redirect; returns its absolute Location. */
export async function expectRedirect(fetcher: Fetch, url: string, init?: RequestInit) {
  const response = await manual(fetcher, url, init);
  const location = response.headers.get("location");
  if (response.status < 300 || response.status > 399 || !location) {
    throw new Error(
      `expected a redirect from ${url}, got ${response.status}: ${await response.text()}`,
    );
  }
  return { status: response.status, location: new URL(location, url).toString() };
}

/** The provider page's form fields, read from its HTML (the hidden `state` in particular). */
export function hiddenState(html: string): string {
  const match = /<input type="hidden" name="state" value="([^"]*)">/.exec(html);
  if (!match?.[1]) throw new Error("no state field on the provider page");
  return match[1].replace(/&amp;/g, "&").replace(/&quot;/g, '"');
}

/** Opens the provider page that `url` is or leads to (/authorize redirects there; linkIdentity's
 * `{ url }` is the page itself): its URL, HTML and the form's state. */
export async function openProviderPage(fetcher: Fetch, url: string) {
  const pageUrl = new URL(url).pathname.startsWith("/provider/")
    ? url
    : (await expectRedirect(fetcher, url)).location;
  const page = await manual(fetcher, pageUrl);
  const html = await page.text();
  if (page.status !== 200) throw new Error(`provider page: ${page.status} ${html}`);
  return { pageUrl, html, state: hiddenState(html) };
}

/** Submits the provider page's form (decision=allow with the account, or decision=deny). */
export async function submitProviderPage(
  fetcher: Fetch,
  pageUrl: string,
  fields: Record<string, string>,
) {
  const action = new URL(pageUrl);
  action.search = "";
  return manual(fetcher, action.toString(), {
    method: "POST",
    headers: { "Content-Type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams(fields).toString(),
  });
}

/**
 * The whole round trip: authorize -> provider page -> form -> /callback -> the final Location
 * (redirect_to with ?code= for PKCE, #access_token= for implicit, ?error= on failure).
 */
export async function followOAuth(
  fetcher: Fetch,
  authorizeUrl: string,
  account: ProviderAccountInput | "deny",
): Promise<URL> {
  const { pageUrl, state } = await openProviderPage(fetcher, authorizeUrl);
  const fields: Record<string, string> =
    account === "deny"
      ? { state, decision: "deny" }
      : {
          state,
          decision: "allow",
          name: account.name ?? "",
          email: account.email,
          provider_id: account.provider_id ?? "",
          email_verified: String(account.email_verified ?? true),
        };
  const submitted = await submitProviderPage(fetcher, pageUrl, fields);
  const callbackUrl = submitted.headers.get("location");
  if (submitted.status !== 302 || !callbackUrl) {
    throw new Error(`provider form: ${submitted.status} ${await submitted.text()}`);
  }
  const { location } = await expectRedirect(fetcher, callbackUrl);
  return new URL(location);
}
