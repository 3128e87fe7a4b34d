/**
 * The parts of waymark loaded on first use, in one table that the source and the builds both
 * read. `waymark serve` answers its client before the engine and the store have loaded
 * (`tools/server/early_server.ts`), so nothing the start-up path imports may load them: the commands
 * (`cli/`), and inside them the web adapters, the commands on the store (with the maintenance
 * operations they call) and the store's optional modules, load here, on demand; so do `waymark
 * hook` (a host waits on it) and `waymark setup` (which opens no store), each on its own,
 * without the commands; and serving itself (`cli/serve_early.ts` for stdio, `cli/serve.ts` for
 * the rest, with the MCP SDK), so that the other commands never load the MCP adapter; a build
 * carries both inline. A test walks the start-up path's static imports and fails on any runtime
 * edge into `engine/` or `store/` (`tests/unit/early_path_test.ts`).
 *
 * From source, {@linkcode load} imports a module by a computed specifier: Deno prepares every
 * literal dynamic-import target of the module graph at start-up (nearly all of waymark), but
 * not a computed one. The builds (`scripts/bundle.ts`, `scripts/build_npm.ts`) replace this file
 * with one generated from {@linkcode LAZY_PARTS} and {@linkcode LAZY_MODULES}, whose imports
 * their bundler can follow: a part carried `apart` is bundled on its own and loaded from a
 * string when first needed (its npm imports load with it, not at start-up); one carried
 * `inline` is bundled with the part that loads it (it shares that part's classes).
 * @module
 */

/** How a build carries a part. */
export type Carried = "apart" | "inline";

/** A part's name. */
export type PartName =
  | "early"
  | "cli"
  | "serving"
  | "web"
  | "commands"
  | "store"
  | "hook"
  | "setup";

/** A part loaded on first use. */
export interface LazyPart {
  /** The part whose code loads it (`null`: the entry, `main.ts`). */
  readonly within: PartName | null;
  /** How a build carries it. */
  readonly carried: Carried;
  /** Whether the library (`mod.ts`, the npm package) loads it too, not only the command line. */
  readonly library?: boolean;
}

/** Every part. */
export const LAZY_PARTS: Readonly<Record<PartName, LazyPart>> = {
  early: { within: null, carried: "inline" },
  cli: { within: null, carried: "apart" },
  serving: { within: "cli", carried: "inline" },
  web: { within: "cli", carried: "apart" },
  commands: { within: "cli", carried: "inline" },
  store: { within: "cli", carried: "inline", library: true },
  hook: { within: null, carried: "apart" },
  setup: { within: null, carried: "apart" },
};

/** Every module loaded on first use: its path from the repository root, and its part. */
export const LAZY_MODULES = {
  serveEarly: { path: "cli/serve_early.ts", part: "early" },
  serving: { path: "cli/serve.ts", part: "serving" },
  cli: { path: "cli/mod.ts", part: "cli" },
  viewer: { path: "web/mod.ts", part: "web" },
  mcpHttp: { path: "web/mcp_http.ts", part: "web" },
  auth: { path: "web/auth/mod.ts", part: "web" },
  postgres: { path: "store/postgres/mod.ts", part: "store" },
  storeCommands: { path: "cli/store_commands.ts", part: "commands" },
  hook: { path: "cli/hook/mod.ts", part: "hook" },
  setup: { path: "cli/setup/command.ts", part: "setup" },
} as const satisfies Record<string, { path: string; part: PartName }>;

/** A lazily loaded module's name. */
export type LazyName = keyof typeof LAZY_MODULES;

/**
 * Loads a module of the table; `T` is its type (`typeof import(...)` at the call site, which
 * loads nothing).
 */
export function load<T>(name: LazyName): Promise<T> {
  return import(new URL(`./${LAZY_MODULES[name].path}`, import.meta.url).href);
}
