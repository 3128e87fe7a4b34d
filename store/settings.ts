/**
 * The command line's settings, flags and environment variables alike, validated by one zod
 * schema: a bad value is refused with the flag's (or variable's) name and what it accepts,
 * never turned into `NaN` or silently ignored.
 * @module
 */
import { z } from "npm:zod@4.6.7";
import { durationSchema } from "./maintenance/duration.ts";
import { DURABILITIES } from "./open_options.ts";
// the vocabulary alone: the command line is parsed before anything else loads
import { SESSION_STATUS_FILTERS as STATUS_FILTERS } from "../engine/vocabulary.ts";
import { PROFILE_NAMES } from "../tools/profiles/registry.ts";

const port = (name: string) =>
  z.string().regex(/^\d{1,5}$/, `${name} must be a port number from 0 to 65535`)
    .transform(Number)
    .pipe(z.number().int().max(65535, `${name} must be a port number from 0 to 65535`));

const milliseconds = (name: string, max: number) =>
  z.string().regex(/^\d{1,9}$/, `${name} must be a whole number of milliseconds (0 to ${max})`)
    .transform(Number)
    .pipe(z.number().int().max(max, `${name} must be at most ${max} ms`));

const count = (name: string, max: number) =>
  z.string().regex(/^\d{1,10}$/, `${name} must be a whole number from 1 to ${max}`)
    .transform(Number)
    .pipe(
      z.number().int().min(1, `${name} must be at least 1`).max(
        max,
        `${name} must be at most ${max}`,
      ),
    );

const text = (name: string) => z.string().min(1, `${name} must not be empty`);

const dbUrl = (name: string) =>
  text(name).refine(
    (url) =>
      url === ":memory:" ||
      /^(file:|libsql:\/\/|https?:\/\/|wss?:\/\/|postgres(ql)?:\/\/)/.test(url),
    `${name} must be file:PATH, :memory:, libsql://…, http(s)://… or postgres://…`,
  );

/** A database URL with its password masked, for logs and messages. */
export function redactDbUrl(url: string): string {
  return url.replace(/^([a-z][a-z0-9+.-]*:\/\/[^:/@]*:)[^@/]*@/i, "$1***@");
}

const flag = (name: string) =>
  z.string().regex(/^(1|0|true|false|yes|no)$/i, `${name} must be 1/0, true/false or yes/no`)
    .transform((v) => /^(1|true|yes)$/i.test(v));

const profile = (name: string) =>
  z.enum(PROFILE_NAMES, { error: `${name} must be ${PROFILE_NAMES.join(" or ")}` });

/** The flags, as `node:util` parseArgs returns them (strings and booleans). */
export const flagsSchema = z.object({
  home: text("--home").optional(),
  db: dbUrl("--db").optional(),
  workspace: text("--workspace").optional(),
  "workflows-dir": z.array(text("--workflows-dir")).optional(),
  "busy-timeout": milliseconds("--busy-timeout", 600_000).optional(),
  durability: z.enum(DURABILITIES, {
    error: `--durability must be ${DURABILITIES.join(" or ")}`,
  }).optional(),
  port: port("--port").optional(),
  viewer: z.boolean().optional(),
  "viewer-port": port("--viewer-port").optional(),
  http: port("--http").optional(),
  "max-body-bytes": count("--max-body-bytes", 1024 * 1024 * 1024).optional(),
  "max-sessions": count("--max-sessions", 100_000).optional(),
  "header-timeout": count("--header-timeout", 3_600_000).optional(),
  "body-timeout": count("--body-timeout", 3_600_000).optional(),
  "enable-start-session": z.boolean().optional(),
  output: text("--output").optional(),
  all: z.boolean().optional(),
  status: z.enum(STATUS_FILTERS, {
    error: `--status must be one of ${STATUS_FILTERS.join(", ")}`,
  }).optional(),
  json: z.boolean().optional(),
  "older-than": durationSchema("--older-than").optional(),
  "dry-run": z.boolean().optional(),
  "keep-running": z.boolean().optional(),
  vacuum: z.boolean().optional(),
  repair: z.boolean().optional(),
  profile: profile("--profile").optional(),
  "jobs-dir": z.array(text("--jobs-dir")).optional(),
  "review-command": text("--review-command").optional(),
  "external-runner": z.enum(["claude"], { error: "--external-runner must be claude" }).optional(),
  "no-quality-gate": z.boolean().optional(),
  "quality-gate-timeout": count("--quality-gate-timeout", 86_400).optional(),
  "quality-gate-max-attempts": count("--quality-gate-max-attempts", 100).optional(),
  client: text("--client").optional(),
  scope: text("--scope").optional(),
  print: z.boolean().optional(),
  help: z.boolean().optional(),
  version: z.boolean().optional(),
});

/** The environment variables waymark reads. */
export const environmentSchema = z.object({
  WAYMARK_HOME: text("WAYMARK_HOME").optional(),
  WAYMARK_DB_URL: dbUrl("WAYMARK_DB_URL").optional(),
  WAYMARK_ENABLE_START_SESSION: flag("WAYMARK_ENABLE_START_SESSION").optional(),
  WAYMARK_PROFILE: profile("WAYMARK_PROFILE").optional(),
  DEEPWORK_ADDITIONAL_JOBS_FOLDERS: z.string().optional(),
});

/** Validated flags. */
export type Flags = z.infer<typeof flagsSchema>;
/** Validated environment. */
export type Environment = z.infer<typeof environmentSchema>;

/** The parseArgs option table, derived from the schema so the two cannot drift. */
export function parseArgsOptions(): Record<
  string,
  { type: "string" | "boolean"; multiple?: boolean; short?: string }
> {
  const shorts: Record<string, string> = { help: "h", version: "V", output: "o" };
  const table: Record<string, { type: "string" | "boolean"; multiple?: boolean; short?: string }> =
    {};
  for (const [name, schema] of Object.entries(flagsSchema.shape)) {
    const inner = (schema as z.ZodOptional<z.ZodType>).unwrap();
    const type = inner instanceof z.ZodBoolean ? "boolean" : "string";
    table[name] = {
      type,
      ...(inner instanceof z.ZodArray ? { multiple: true } : {}),
      ...(shorts[name] ? { short: shorts[name] } : {}),
    };
  }
  return table;
}

/** Validates parsed flags and the environment; the error names every bad flag or variable. */
export function parseSettings(
  flags: Record<string, unknown>,
  env: Record<string, string | undefined>,
): { ok: true; flags: Flags; env: Environment } | { ok: false; message: string } {
  const f = flagsSchema.safeParse(flags);
  const presentEnv = Object.fromEntries(
    Object.keys(environmentSchema.shape).flatMap((k) => env[k] ? [[k, env[k]]] : []),
  );
  const e = environmentSchema.safeParse(presentEnv);
  if (f.success && e.success) return { ok: true, flags: f.data, env: e.data };
  const issues = [...(f.error?.issues ?? []), ...(e.error?.issues ?? [])];
  const lines = issues.map((issue) => {
    const name = String(issue.path[0] ?? "");
    const shown = name in flags ? flags[name] : env[name];
    return `${issue.message} (got ${JSON.stringify(shown)})`;
  });
  return { ok: false, message: lines.join("\n") };
}
