/** The only configuration that may reach the browser: the project URL and its publishable key. */
export interface PublicEnv {
  SUPABASE_URL: string;
  SUPABASE_PUBLISHABLE_KEY: string;
}
