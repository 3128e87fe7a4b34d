/**
 * `$WAYMARK_HOME/config.json` (JSON or JSONC): extra workflow directories, the global
 * default preferences that every new session copies, and the retention `waymark gc` applies.
 * @module
 */
import { readFile } from "node:fs/promises";
import { isAbsolute, join } from "node:path";
import { parse, type ParseError, printParseErrorCode } from "npm:jsonc-parser@3.3.1";
import { z } from "npm:zod@4.6.7";
import { type PreferencesPatch, preferencesPatchSchema } from "../engine/preferences.ts";
import { formatPath } from "../engine/workflow/parse.ts";
import { durationSchema } from "./maintenance/duration.ts";

const configSchema = z.object({
  $schema: z.string().optional(),
  workflowDirs: z.array(z.string().min(1)).optional().describe(
    "Extra workflow directories (lowest precedence); relative paths are relative to WAYMARK_HOME.",
  ),
  preferences: preferencesPatchSchema.optional().describe("Default preferences for new sessions."),
  retention: z.object({
    olderThan: z.string().describe("`waymark gc` with no flags removes sessions idle this long."),
  }).strict().optional(),
  jobDirs: z.array(z.string().min(1)).optional().describe(
    "Folders of DeepWork job folders (after the workspace's .deepwork/jobs); relative to WAYMARK_HOME.",
  ),
}).strict();

/** The settings read from the config file. */
export interface WaymarkConfig {
  /** Extra workflow directories, absolute. */
  workflowDirs: string[];
  /** Default preferences for new sessions. */
  preferences: PreferencesPatch;
  /** How long `waymark gc` with no flags keeps an idle session, or `null` (gc then needs a flag). */
  retention: { olderThan: string; olderThanMs: number } | null;
  /** Folders of DeepWork job folders, absolute. */
  jobDirs: string[];
}

const retentionAge = durationSchema("retention.olderThan");

/** Reads `<home>/config.json`; a missing file is an empty config, a broken one an error that says where. */
export async function loadConfig(home: string): Promise<WaymarkConfig> {
  const file = join(home, "config.json");
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (error) {
    if ((error as { code?: string }).code === "ENOENT") {
      return { workflowDirs: [], preferences: {}, retention: null, jobDirs: [] };
    }
    throw error;
  }
  const errors: ParseError[] = [];
  const data: unknown = parse(text, errors, { allowTrailingComma: true });
  if (errors.length > 0) {
    throw new Error(
      `${file}: JSON syntax error (${printParseErrorCode(errors[0]!.error)}) at offset ${
        errors[0]!.offset
      }; fix it or remove the file`,
    );
  }
  const parsed = configSchema.safeParse(data);
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) =>
      `${formatPath(i.path) || "(file)"}: ${i.message}`
    );
    throw new Error(
      `${file}: ${
        problems.join("; ")
      }. Allowed keys: workflowDirs (string[]), preferences ({autonomy, riskPolicy}), retention ({olderThan}), jobDirs (string[]).`,
    );
  }
  const olderThan = parsed.data.retention?.olderThan;
  const age = olderThan === undefined ? null : retentionAge.safeParse(olderThan);
  if (age && !age.success) throw new Error(`${file}: ${age.error.issues[0]!.message}`);
  return {
    retention: olderThan && age?.success ? { olderThan, olderThanMs: age.data } : null,
    workflowDirs: (parsed.data.workflowDirs ?? []).map((dir) =>
      isAbsolute(dir) ? dir : join(home, dir)
    ),
    preferences: parsed.data.preferences ?? {},
    jobDirs: (parsed.data.jobDirs ?? []).map((dir) => isAbsolute(dir) ? dir : join(home, dir)),
  };
}
