import type { SupabaseClient } from "@supabase/supabase-js";
import type { SupabaseEnv } from "./env.server";

/**
 * The few Storage calls the Worker makes, as the signed-in user (their access token, so the
 * bucket's RLS decides), over plain fetch: storage-js is left out of the Worker build (decision
 * 018), and these few endpoints are all the app needs. Same paths and bodies as storage-js.
 */
export interface StorageCalls {
  /** `cacheControl`: how long the object may be cached where it is served (default 5 minutes). */
  upload(
    bucket: string,
    path: string,
    body: Blob,
    contentType: string,
    options?: { cacheControl?: string },
  ): Promise<StorageResult>;
  /** Signed download URLs (absolute), in the order of `paths`; null where refused. */
  signUrls(bucket: string, paths: string[], expiresIn: number): Promise<(string | null)[]>;
  /**
   * One signed URL (absolute), of a transformed image when `transform` is given and the project
   * has transformations (`/render/image/sign/…`): upstream's batch call takes no transformation.
   * Null when refused.
   */
  signUrl(
    bucket: string,
    path: string,
    expiresIn: number,
    transform?: ImageTransform,
  ): Promise<string | null>;
  /**
   * A signed upload URL's token (upstream: 2 hours, one upload, no RLS when used): the browser
   * sends the bytes straight to Storage with it, by PUT or TUS. Null when refused.
   */
  signUpload(bucket: string, path: string): Promise<string | null>;
  remove(bucket: string, paths: string[]): Promise<StorageResult>;
  /** One level of a folder: object names, and sub-folder names (`folder: true`). */
  list(bucket: string, prefix: string): Promise<{ name: string; folder: boolean }[] | null>;
}

/** Storage's image transformation options (as storage-js's `TransformOptions`). */
export interface ImageTransform {
  width?: number;
  height?: number;
  resize?: "cover" | "contain" | "fill";
  quality?: number;
}

export interface StorageResult {
  ok: boolean;
  status: number;
  /** Storage's message on a refusal (e.g. "The object exceeded the maximum allowed size"). */
  message?: string;
}

const TIMEOUT_MS = 15_000;

/** The request's access token (the middleware verified it already), or null. */
export async function accessToken(supabase: Pick<SupabaseClient, "auth">): Promise<string | null> {
  // (a session the middleware verified with getClaims(): reading it here is deliberate)
  (supabase.auth as unknown as { suppressGetSessionWarning: boolean }).suppressGetSessionWarning =
    true;
  const { data } = await supabase.auth.getSession();
  return data.session?.access_token ?? null;
}

export function storageCalls(
  env: SupabaseEnv,
  token: string,
  fetcher: typeof fetch = fetch,
): StorageCalls {
  const base = `${env.url}/storage/v1`;
  const headers = { apikey: env.publishableKey, Authorization: `Bearer ${token}` };
  const objectPath = (bucket: string, path: string) =>
    [bucket, ...path.split("/")].map(encodeURIComponent).join("/");

  /** Storage unreachable or too slow is a 503 like any other refusal: callers decide. */
  async function call(path: string, init: RequestInit): Promise<Response> {
    try {
      return await fetcher(`${base}${path}`, {
        ...init,
        headers: { ...headers, ...init.headers },
        signal: AbortSignal.timeout(TIMEOUT_MS),
      });
    } catch {
      return Response.json({ message: "Storage could not be reached" }, { status: 503 });
    }
  }

  async function result(response: Response): Promise<StorageResult> {
    if (response.ok) {
      await response.body?.cancel();
      return { ok: true, status: response.status };
    }
    const body = (await response.json().catch(() => null)) as { message?: string } | null;
    return { ok: false, status: response.status, message: body?.message };
  }

  const json = (value: unknown): RequestInit => ({
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify(value),
  });

  return {
    async upload(bucket, path, body, contentType, options) {
      return result(
        await call(`/object/${objectPath(bucket, path)}`, {
          method: "POST",
          headers: {
            "Content-Type": contentType,
            // no x-upsert: an upload never replaces (upstream's default)
            "Cache-Control": options?.cacheControl ?? "max-age=300",
          },
          body,
        }),
      );
    },
    async signUrls(bucket, paths, expiresIn) {
      if (paths.length === 0) return [];
      const response = await call(
        `/object/sign/${encodeURIComponent(bucket)}`,
        json({ expiresIn, paths }),
      );
      if (!response.ok) {
        await response.body?.cancel();
        return paths.map(() => null);
      }
      const signed = (await response.json()) as { path: string; signedURL: string | null }[];
      const byPath = new Map(signed.map((s) => [s.path, s.signedURL]));
      return paths.map((p) => {
        const url = byPath.get(p);
        return url ? `${base}${url}` : null;
      });
    },
    async signUrl(bucket, path, expiresIn, transform) {
      const response = await call(
        `/object/sign/${objectPath(bucket, path)}`,
        json(transform ? { expiresIn, transform } : { expiresIn }),
      );
      if (!response.ok) {
        await response.body?.cancel();
        return null;
      }
      const { signedURL } = (await response.json()) as { signedURL?: string };
      return signedURL ? `${base}${signedURL}` : null;
    },
    async signUpload(bucket, path) {
      const response = await call(`/object/upload/sign/${objectPath(bucket, path)}`, {
        method: "POST",
      });
      if (!response.ok) {
        await response.body?.cancel();
        return null;
      }
      const { url } = (await response.json()) as { url?: string };
      return url ? new URL(url, base).searchParams.get("token") : null;
    },
    async remove(bucket, paths) {
      if (paths.length === 0) return { ok: true, status: 200 };
      return result(
        await call(`/object/${encodeURIComponent(bucket)}`, {
          ...json({ prefixes: paths }),
          method: "DELETE",
        }),
      );
    },
    async list(bucket, prefix) {
      const response = await call(
        `/object/list/${encodeURIComponent(bucket)}`,
        json({ prefix, limit: 1000, offset: 0, sortBy: { column: "name", order: "asc" } }),
      );
      if (!response.ok) {
        await response.body?.cancel();
        return null;
      }
      const items = (await response.json()) as { name: string; id: string | null }[];
      return items.map((item) => ({ name: item.name, folder: item.id === null }));
    },
  };
}
