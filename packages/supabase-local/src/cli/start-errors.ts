// Why a command stopped, when it is something the developer can fix, said in a sentence instead of
// a stack trace: supabase/config.toml (or a file it names) that cannot be used; a port another
// program holds; a migration or seed file that fails (its file, line and Postgres' message); a
// database in .local-data that will not open. The command line (cli.ts) and the repository's `npm run dev` say the same. The last two are
// recognised by name: the command line loads their modules (project/migrations.ts, database/database.ts) only with
// `start`, so that status and reset answer at once.
import { ConfigError } from "../project/config.ts";

/**
 * The sentence for `error`, or undefined when it is not one of those (it is then not ours to
 * explain). `resetCommand` is how the reader deletes .local-data: `supabase-local reset` for the
 * command line, `npm run local:reset` in the repository.
 */
export function startRefusal(error: unknown, resetCommand: string): string | undefined {
  if (error instanceof ConfigError) return error.message;
  if (!(error instanceof Error)) return undefined;
  // Node's message names the address ("listen EADDRINUSE: address already in use 127.0.0.1:54322")
  if ((error as NodeJS.ErrnoException).code === "EADDRINUSE") {
    return `The local backend could not start: ${error.message}. Is another local backend (supabase-local start, npm run local, supabase start) or a Postgres running? Stop it, or change the port in supabase/config.toml.`;
  }
  if (error.name === "MigrationError") return `Could not apply ${error.message}`;
  if (error.name === "DatabaseOpenError") {
    return `${error.message}
If it is damaged (a crash, a full disk) or was made by another version, \`${resetCommand}\`
deletes it, and the next start makes it again from the migrations and the seed.`;
  }
  return undefined;
}
