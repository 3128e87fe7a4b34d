/**
 * The command line's flags, one table ({@linkcode FLAGS}): each flag's zod schema, its value's
 * name and what it does. The parser's option table, the validation and the help are derived
 * from it; which commands take a flag is said once, in the command table (`commands.ts`). A bad
 * value is refused with the flag's (or variable's) name and what it accepts, never turned into
 * `NaN` or silently ignored. Loaded before anything else, so it imports only what is light.
 * @module
 */
import { z } from "npm:zod@4.6.7";
import { durationSchema } from "../store/maintenance/duration.ts";
import { DB_URL_FORMS, isDbUrl } from "../store/db_url.ts";
import { DEFAULT_BUSY_TIMEOUT_MS, DURABILITIES } from "../store/open_options.ts";
// the vocabulary alone: the command line is parsed before anything else loads
import {
  RUN_ACCESS,
  SESSION_STATUS_FILTERS as STATUS_FILTERS,
} from "../engine/model/vocabulary.ts";
import { PROFILE_NAMES } from "../tools/profiles/registry.ts";
import { CLIENT_NAMES, SCOPES } from "./setup/clients.ts";
import { authUrlSchema, scopeSchema } from "../config/auth_settings.ts";

const port = (name: string) =>
  z.string().regex(/^\d{1,5}$/, `${name} must be a port number from 0 to 65535`)
    .transform(Number)
    .pipe(z.number().int().max(65535, `${name} must be a port number from 0 to 65535`));

const milliseconds = (max: number) => (name: string) =>
  z.string().regex(/^\d{1,9}$/, `${name} must be a whole number of milliseconds (0 to ${max})`)
    .transform(Number)
    .pipe(z.number().int().max(max, `${name} must be at most ${max} ms`));

const count = (max: number) => (name: string) =>
  z.string().regex(/^\d{1,10}$/, `${name} must be a whole number from 1 to ${max}`)
    .transform(Number)
    .pipe(
      z.number().int().min(1, `${name} must be at least 1`).max(
        max,
        `${name} must be at most ${max}`,
      ),
    );

const text = (name: string) => z.string().min(1, `${name} must not be empty`);

const texts = (name: string) => z.array(text(name));

const dbUrl = (name: string) => text(name).refine(isDbUrl, `${name} must be ${DB_URL_FORMS}`);

/** The values in words: `a`, `a or b`, `one of a, b, c`. */
const choice = (values: readonly string[]) =>
  values.length > 2 ? `one of ${values.join(", ")}` : values.join(" or ");

const oneOf = <const T extends readonly [string, ...string[]]>(values: T) => (name: string) =>
  z.enum(values, { error: `${name} must be ${choice(values)}` });

const toggle = () => z.boolean();

const yesNo = (name: string) =>
  z.string().regex(/^(1|0|true|false|yes|no)$/i, `${name} must be 1/0, true/false or yes/no`)
    .transform((v) => /^(1|true|yes)$/i.test(v));

/** One flag: how its value is checked, and how the help shows it. */
interface FlagSpec {
  /** The value's schema; `name` is the flag as typed (`--home`), for messages. */
  schema(name: string): z.ZodType;
  /** What the help calls its value (`DIR`, `PORT`); none for a switch (a `z.boolean()`). */
  value?: string;
  /** Given once per value (`--files a --files b`): its schema is an array. */
  repeatable?: true;
  /** Its one-letter alias. */
  short?: string;
  /** Taken by every command (where it means anything), so no command lists it. */
  common?: true;
  /** What it does. */
  help: string;
}

/** Every flag, in the order the help shows them. */
export const FLAGS = {
  home: {
    schema: text,
    value: "DIR",
    common: true,
    help: "data folder (default $WAYMARK_HOME or ~/.waymark)",
  },
  db: {
    schema: dbUrl,
    value: "URL",
    common: true,
    help: "database URL (default $WAYMARK_DB_URL or file:<home>/waymark.db; :memory: for a " +
      "throwaway store; postgres://… for a team store on a PostgreSQL server)",
  },
  workspace: {
    schema: text,
    value: "DIR",
    common: true,
    help: "project folder whose .waymark/workflows is searched (default: cwd); for `sessions " +
      "list` and `sessions export --all`, only the sessions of that folder",
  },
  "workflows-dir": {
    schema: texts,
    value: "DIR",
    repeatable: true,
    common: true,
    help: "an extra workflow folder (repeatable; lowest precedence)",
  },
  "busy-timeout": {
    schema: milliseconds(600_000),
    value: "MS",
    common: true,
    help:
      `how long to wait for another process's database lock (default ${DEFAULT_BUSY_TIMEOUT_MS})`,
  },
  durability: {
    schema: oneOf(DURABILITIES),
    value: "MODE",
    common: true,
    help: "normal (default: survives a crash of waymark; a power loss may lose the last few " +
      "commits) or full (every commit synced to disk first)",
  },
  http: {
    schema: port,
    value: "PORT",
    help: "Streamable HTTP on 127.0.0.1:PORT (or --bind ADDR) instead of stdio",
  },
  bind: {
    schema: (name: string) =>
      text(name).regex(/^[A-Za-z0-9.:\[\]-]{1,255}$/, `${name} must be an IP address or host name`),
    value: "ADDR",
    help: "with --http, the address to listen on (default 127.0.0.1); anything but loopback " +
      "is refused unless authentication is configured (--auth-resource …)",
  },
  "auth-resource": {
    schema: authUrlSchema,
    value: "URL",
    help: "with --http, require authentication: this server's public MCP URL " +
      "(https://host/mcp), the audience every token must name (docs/team_service.md)",
  },
  "auth-issuer": {
    schema: authUrlSchema,
    value: "URL",
    help: "accept bearer JWTs of this identity provider (its issuer URL)",
  },
  "auth-jwks-url": {
    schema: authUrlSchema,
    value: "URL",
    help: "the issuer's JWKS (default: jwks_uri from the issuer's metadata)",
  },
  "auth-scope": {
    schema: (name: string) => z.array(scopeSchema(name)),
    value: "SCOPE",
    repeatable: true,
    help: "with --http, a scope every token must carry (repeatable); with `tokens create`, a " +
      "scope the token grants (default: config.json's auth.scopes)",
  },
  "auth-jwks-timeout": {
    schema: milliseconds(60_000),
    value: "MS",
    help: "how long fetching the issuer's keys may take before a call is refused (default 3000)",
  },
  "personal-tokens": {
    schema: toggle,
    help: "with --http, accept personal access tokens made by `waymark tokens create`",
  },
  "tls-cert": {
    schema: text,
    value: "FILE",
    help: "with --http and --tls-key, serve HTTPS with this certificate chain (PEM); usually a " +
      "proxy in front terminates TLS instead (docs/team_service.md)",
  },
  "tls-key": { schema: text, value: "FILE", help: "the private key (PEM) of --tls-cert" },
  viewer: {
    schema: toggle,
    help: "the read-only viewer beside the server (its URL logged to stderr)",
  },
  "viewer-port": {
    schema: port,
    value: "N",
    help: "viewer port for `serve --viewer` (default 4321; 0 picks a free one)",
  },
  "max-body-bytes": {
    schema: count(1024 * 1024 * 1024),
    value: "N",
    help: "with --http, the largest request body (default 4194304, as a stdio line)",
  },
  stateless: {
    schema: toggle,
    help: "with --http, keep nothing between requests (no MCP sessions): for replicas behind " +
      "a round-robin balancer (docs/team_service.md)",
  },
  "run-access": {
    schema: oneOf(RUN_ACCESS),
    value: "WHO",
    help: "who may continue a run an authenticated caller starts: owner (default: its starter " +
      "only) or team (any member)",
  },
  "max-sessions": {
    schema: count(100_000),
    value: "N",
    help: "with --http, live MCP sessions at most; past it the one idle longest is closed " +
      "(default 100)",
  },
  "header-timeout": {
    schema: count(3_600_000),
    value: "MS",
    help: "a request's headers must arrive within MS of its first byte, or the connection " +
      "is closed (default 10000); for HTTP: serve --http, the viewer",
  },
  "body-timeout": {
    schema: count(3_600_000),
    value: "MS",
    help: "a request's body must arrive within MS of its headers (default 30000); for HTTP",
  },
  "enable-start-session": {
    schema: toggle,
    help: "list the start_session tool (or WAYMARK_ENABLE_START_SESSION=1)",
  },
  profile: {
    schema: oneOf(PROFILE_NAMES),
    value: "NAME",
    help: "default, or deepwork: DeepWork's tools over .deepwork/jobs (or WAYMARK_PROFILE)",
  },
  "jobs-dir": {
    schema: texts,
    value: "DIR",
    repeatable: true,
    help: "a folder of DeepWork job folders (repeatable; after the workspace's .deepwork/jobs; " +
      "DEEPWORK_ADDITIONAL_JOBS_FOLDERS adds more, colon-separated)",
  },
  "review-command": {
    schema: text,
    value: "CMD",
    help: "DeepWork's external quality reviewer: prompt on stdin, JSON verdict " +
      "{passed, feedback, criteria_results?} on stdout; self-review without it",
  },
  "external-runner": {
    schema: oneOf(["claude"]),
    value: "claude",
    help: "DeepWork's reviews through the Claude Code CLI on PATH (claude -p --output-format " +
      "json); --review-command replaces it",
  },
  "no-quality-gate": { schema: toggle, help: "skip DeepWork's quality reviews" },
  "quality-gate-timeout": {
    schema: count(86_400),
    value: "S",
    help: "seconds one DeepWork review may take (default 120)",
  },
  "quality-gate-max-attempts": {
    schema: count(100),
    value: "N",
    help: "DeepWork's external reviews per step (default 3)",
  },
  port: {
    schema: port,
    value: "N",
    help: "viewer port (default 4321; 0 picks a free one)",
  },
  client: {
    schema: oneOf(CLIENT_NAMES),
    value: "NAME",
    help: `the MCP client whose configuration gets the entry: ${CLIENT_NAMES.join(", ")}`,
  },
  scope: {
    schema: oneOf(SCOPES),
    value: "SCOPE",
    help: `${SCOPES.join(" (the client's own file) or ")} (the workspace's file); each client ` +
      "has its usual one as the default",
  },
  print: { schema: toggle, help: "print the entry instead of writing it" },
  status: {
    schema: oneOf(STATUS_FILTERS),
    value: "S",
    help: `only sessions with this status: ${STATUS_FILTERS.join(", ")}`,
  },
  all: {
    schema: toggle,
    help: "every session (narrowed by --workspace, --status, --older-than), one bundle each",
  },
  output: {
    schema: text,
    value: "FILE",
    short: "o",
    help: "where the bundle goes (- for stdout; a folder with --all)",
  },
  "older-than": {
    schema: durationSchema,
    value: "AGE",
    help: "idle longer than AGE: 45m, 12h, 30d, 2w",
  },
  name: {
    schema: (name: string) =>
      text(name).regex(
        /^[A-Za-z0-9][A-Za-z0-9._@ -]{0,63}$/,
        `${name} must be 1 to 64 letters, digits, spaces or ._@- (starting with a letter or digit)`,
      ),
    value: "NAME",
    help: "who a personal access token stands for (shown as its principal)",
  },
  expires: {
    schema: durationSchema,
    value: "AGE",
    help: "the token expires after AGE: 12h, 30d, 2w (default: never)",
  },
  bot: { schema: toggle, help: "the token stands for a bot (CI, a cloud agent), not a person" },
  "dry-run": { schema: toggle, help: "say what would be removed; remove nothing" },
  snapshot: {
    schema: (name: string) =>
      z.string().regex(/^[0-9a-f]{40,64}$/, `${name} must be a snapshot commit (40 hex digits)`),
    value: "ID",
    help: "restore this snapshot of the run (a restore's `before`: the undo)",
  },
  "keep-running": { schema: toggle, help: "keep sessions with a run still running" },
  vacuum: {
    schema: toggle,
    help: "then VACUUM the database to give the space back (writers wait meanwhile)",
  },
  repair: {
    schema: toggle,
    help: "first repair what the log can (schema, snapshots, projections, search rows, WAL, " +
      "file modes), then check again",
  },
  json: { schema: toggle, help: "JSON on stdout instead of lines" },
  graph: { schema: toggle, help: "print the workflow as a Mermaid flowchart" },
  watch: { schema: toggle, help: "run again whenever the file is saved (until interrupted)" },
  "base-ref": {
    schema: text,
    value: "REF",
    help: "review what changed since the merge-base with REF (default main, else master)",
  },
  files: {
    schema: texts,
    value: "FILE",
    repeatable: true,
    help: "review these files instead of what git shows as changed (repeatable; - reads a " +
      "list from stdin)",
  },
  help: {
    schema: toggle,
    short: "h",
    common: true,
    help: "this help; after a command, that command's",
  },
  version: {
    schema: toggle,
    short: "V",
    common: true,
    help: "waymark's version and how it was built",
  },
} as const satisfies Record<string, FlagSpec>;

/** A flag's name, without its dashes. */
export type FlagName = keyof typeof FLAGS;

type FlagValue<K extends FlagName> = z.output<ReturnType<(typeof FLAGS)[K]["schema"]>>;

/** Validated flags: those given, each its schema's output. */
export type Flags = { [K in FlagName]?: FlagValue<K> };

/**
 * The schema of the flags given. Only theirs are built, so that a command does not pay for the
 * fifty it was not given (about 4 ms of schemas, and 3 ms for zod to compile their parser).
 */
function flagsSchema(names: readonly FlagName[]): z.ZodObject {
  return z.object(
    Object.fromEntries(names.map((name) => [name, FLAGS[name].schema(`--${name}`).optional()])),
  );
}

/** The environment variables waymark reads. */
export const environmentSchema = z.object({
  WAYMARK_HOME: text("WAYMARK_HOME").optional(),
  WAYMARK_DB_URL: dbUrl("WAYMARK_DB_URL").optional(),
  WAYMARK_ENABLE_START_SESSION: yesNo("WAYMARK_ENABLE_START_SESSION").optional(),
  WAYMARK_PROFILE: oneOf(PROFILE_NAMES)("WAYMARK_PROFILE").optional(),
  DEEPWORK_ADDITIONAL_JOBS_FOLDERS: z.string().optional(),
  DEEPWORK_ADDITIONAL_SCHEMAS_FOLDERS: z.string().optional(),
});

/** Validated environment. */
export type Environment = z.infer<typeof environmentSchema>;

/** One entry of parseArgs' option table. */
type ParseOption = { type: "string" | "boolean"; multiple?: boolean; short?: string };

/** The parseArgs option table, derived from {@linkcode FLAGS}: a switch has no value. */
export function parseArgsOptions(): Record<string, ParseOption> {
  const table: Record<string, ParseOption> = {};
  for (const [name, spec] of Object.entries(FLAGS) as [FlagName, FlagSpec][]) {
    table[name] = {
      type: spec.value === undefined ? "boolean" : "string",
      ...(spec.repeatable ? { multiple: true } : {}),
      ...(spec.short ? { short: spec.short } : {}),
    };
  }
  return table;
}

/** Validates parsed flags and the environment; the error names every bad flag or variable. */
export function parseSettings(
  flags: Record<string, unknown>,
  env: Record<string, string | undefined>,
): { ok: true; flags: Flags; env: Environment } | { ok: false; message: string } {
  const given = Object.keys(flags).filter((name): name is FlagName => Object.hasOwn(FLAGS, name));
  const f = flagsSchema(given).safeParse(flags);
  const presentEnv = Object.fromEntries(
    Object.keys(environmentSchema.shape).flatMap((k) => env[k] ? [[k, env[k]]] : []),
  );
  const e = environmentSchema.safeParse(presentEnv);
  if (f.success && e.success) return { ok: true, flags: f.data as Flags, env: e.data };
  const issues = [...(f.error?.issues ?? []), ...(e.error?.issues ?? [])];
  const lines = issues.map((issue) => {
    const name = String(issue.path[0] ?? "");
    const shown = name in flags ? flags[name] : env[name];
    return `${issue.message} (got ${JSON.stringify(shown)})`;
  });
  return { ok: false, message: lines.join("\n") };
}
