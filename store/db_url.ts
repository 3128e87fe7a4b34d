/**
 * Database URLs: the forms a store opens (`open.ts` picks the dialect by them), and how one is
 * shown in logs and messages. Imports nothing, so the command line can check `--db` before
 * anything else loads.
 * @module
 */

/** The database URLs waymark opens, in words (for messages refusing another). */
export const DB_URL_FORMS = "file:PATH, :memory:, libsql://…, http(s)://… or postgres://…";

/** Whether `url` is one of {@linkcode DB_URL_FORMS}. */
export function isDbUrl(url: string): boolean {
  return url === ":memory:" ||
    /^(file:|libsql:\/\/|https?:\/\/|wss?:\/\/|postgres(ql)?:\/\/)/.test(url);
}

/** A database URL with its password masked, for logs and messages. */
export function redactDbUrl(url: string): string {
  return url.replace(/^([a-z][a-z0-9+.-]*:\/\/[^:/@]*:)[^@/]*@/i, "$1***@");
}

/**
 * The file a `file:` URL names, for the native connections; undefined for memory databases
 * (a second connection would be a second database) and URLs with parameters, which stay on
 * the client.
 */
export function localFilePath(url: string): string | undefined {
  if (!url.startsWith("file:") || url.includes("?") || url.includes(":memory:")) return undefined;
  const rest = url.slice("file:".length);
  if (rest.startsWith("//")) {
    const match = /^\/\/(localhost)?(\/.*)$/.exec(rest);
    return match ? decodeURIComponent(match[2]) : undefined;
  }
  return decodeURIComponent(rest);
}
