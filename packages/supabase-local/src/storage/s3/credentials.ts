// The S3 endpoint's fixed credentials, as the Supabase CLI gives its Storage (pkg/config's
// storage.S3Credentials, not configurable) and prints with `supabase status`: the access key pair
// stands for the service role, and the region is `local`. A user's requests are signed instead
// with the tenant id as access key and the anon key as secret, the user's JWT as session token.
export const S3_CREDENTIALS = {
  accessKeyId: "625729a08b95bf1b7ff351a663f3a23c",
  secretAccessKey: "850181e4652dd023b7a98c58ae0d2d34bd487ee0cc3254aed6eda37307425907",
  region: "local",
} as const;

/** The CLI's Storage tenant id (TENANT_ID=stub): a session token's access key. */
export const TENANT_ID = "stub";
