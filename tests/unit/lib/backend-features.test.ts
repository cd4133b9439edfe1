// offersImageTransformations decides from Storage's answer to a public render of an object that
// cannot exist. The answers below are the real ones (tests/integration/image-transformations.test.ts
// holds the test backend and one with transformations off to them): a lookup that failed means the
// feature is there; FeatureNotEnabled (hosted, free plan) or no such route (a Storage without it)
// mean it is not; anything else decides nothing and is asked again.
import { describe, expect, it } from "vitest";
import { offersImageTransformations } from "../../../app/lib/backend-features.server";

/** A fetch that answers every request with `status` and `body`, counting the requests and their URLs. */
function answering(status: number, body: unknown) {
  const urls: string[] = [];
  const fetcher: typeof fetch = async (input, init) => {
    urls.push(String(input));
    expect(new Headers(init?.headers).get("apikey")).toBe("publishable");
    return new Response(typeof body === "string" ? body : JSON.stringify(body), {
      status,
      headers: { "Content-Type": "application/json" },
    });
  };
  return { fetcher, urls };
}

const NO_SUCH_BUCKET = {
  statusCode: "404",
  code: "NoSuchBucket",
  error: "Bucket not found",
  message: "Bucket not found",
};
const NO_SUCH_KEY = {
  statusCode: "404",
  code: "NoSuchKey",
  error: "not_found",
  message: "Object not found",
};
const FEATURE_NOT_ENABLED = {
  error: "FeatureNotEnabled",
  statusCode: "403",
  message: "feature not enabled for this tenant",
};

let n = 0;
/** A backend URL no other test has asked about (the answers are kept per URL). */
const backend = () => `https://project-${++n}.example.test`;

describe("offersImageTransformations", () => {
  it("yes when the lookup failed: the render route is there", async () => {
    for (const body of [NO_SUCH_BUCKET, NO_SUCH_KEY]) {
      const { fetcher, urls } = answering(400, body);
      const url = backend();
      expect(await offersImageTransformations(url, "publishable", fetcher)).toBe(true);
      expect(urls).toHaveLength(1);
      expect(urls[0]).toMatch(new RegExp(`^${url}/storage/v1/render/image/public/[^/]+/[^/?]+`));
    }
  });

  it("no on FeatureNotEnabled (hosted, free plan) or when Storage has no render routes", async () => {
    const hosted = answering(403, FEATURE_NOT_ENABLED);
    expect(await offersImageTransformations(backend(), "publishable", hosted.fetcher)).toBe(false);
    const routeless = answering(404, {
      statusCode: 404,
      error: "Not Found",
      message: "Route GET:/render/image/public/edge-notes-feature-probe/none.png not found",
    });
    expect(await offersImageTransformations(backend(), "publishable", routeless.fetcher)).toBe(
      false,
    );
  });

  it("an answer is kept per backend URL; one that decides nothing is not", async () => {
    const url = backend();
    const yes = answering(400, NO_SUCH_KEY);
    expect(await offersImageTransformations(url, "publishable", yes.fetcher)).toBe(true);
    const no = answering(403, FEATURE_NOT_ENABLED);
    expect(await offersImageTransformations(url, "publishable", no.fetcher)).toBe(true);
    expect(no.urls).toHaveLength(0);
    expect(await offersImageTransformations(backend(), "publishable", no.fetcher)).toBe(false);

    const undecided = backend();
    const cases: [number, unknown][] = [
      [502, "<html>Bad gateway</html>"],
      [401, { message: "Invalid API key" }],
      [404, { statusCode: 404, error: "Not Found", message: "Not Found" }],
      [403, { statusCode: "403", error: "Unauthorized", message: "new row violates" }],
      [200, {}],
    ];
    for (const [status, body] of cases) {
      const { fetcher } = answering(status, body);
      expect(await offersImageTransformations(undecided, "publishable", fetcher)).toBeNull();
    }
    const unreachable: typeof fetch = async () => {
      throw new TypeError("fetch failed");
    };
    expect(await offersImageTransformations(undecided, "publishable", unreachable)).toBeNull();
    const later = answering(403, FEATURE_NOT_ENABLED);
    expect(await offersImageTransformations(undecided, "publishable", later.fetcher)).toBe(false);
    expect(later.urls).toHaveLength(1);
  });
});
