/**
 * `$WAYMARK_HOME/config.json` (JSON or JSONC): extra workflow directories, the global
 * default preferences that every new session copies, the retention `waymark gc` applies,
 * where verification commands may run (`docs/verification.md`), and how `serve --http`
 * authenticates (`docs/team_service.md`).
 * @module
 */
import { readFile } from "node:fs/promises";
import { isAbsolute, join, resolve } from "node:path";
import { parse, type ParseError, printParseErrorCode } from "npm:jsonc-parser@3.3.1";
import { z } from "npm:zod@4.6.7";
import { type PreferencesPatch, preferencesPatchSchema } from "../engine/model/preferences.ts";
import { formatPath } from "../engine/common/issue_path.ts";
import {
  parsePolicy,
  type VerificationPolicy,
  verificationSettingsSchema,
} from "../engine/verification/policy.ts";
import { durationSchema } from "../store/maintenance/duration.ts";
import { TRANSCRIPT_WAIT_MS } from "../store/transcripts/claude_code.ts";
import type { CostSettings } from "../store/transcripts/mod.ts";
import { type AuthSettingsFile, authSettingsFileSchema } from "./auth_settings.ts";

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
  verification: verificationSettingsSchema.optional().describe(
    "Where waymark may run workflows' verification commands, and which (off when absent).",
  ),
  cost: z.object({
    transcripts: z.boolean().optional().describe(
      "Read the host's transcript for each step's token counts (numbers only); default true.",
    ),
    tokenBudget: z.number().int().positive().optional().describe(
      "Tokens a run may use before every answer carries a TOKEN_BUDGET_EXCEEDED warning.",
    ),
    transcriptWaitMs: z.number().int().min(0).max(30_000).optional().describe(
      "How long an acknowledgement waits for its model call to reach the transcript; default 1500.",
    ),
  }).strict().optional().describe("What runs cost (docs/cost.md)."),
  auth: authSettingsFileSchema.optional().describe(
    "Authentication of `serve --http` (docs/team_service.md); flags override each field.",
  ),
  snapshots: z.object({
    enabled: z.boolean().optional(),
    budgetMs: z.number().int().min(0).max(60_000).optional(),
  }).strict().optional().describe("Workspace snapshots at every step (docs/snapshots.md)."),
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
  /** Where verification commands may run: no workspace when the file says nothing. */
  verification: VerificationPolicy;
  /** The `auth` section (`serve --http`'s authentication), as written. */
  auth: AuthSettingsFile;
  /** Whether transcripts are read for token counts, and the runs' token budget (`null`: none). */
  cost: CostSettings;
  /** Workspace snapshots: on unless the file turns them off; their time budget (ms). */
  snapshots: { enabled: boolean; budgetMs?: number };
}

const retentionAge = durationSchema("retention.olderThan");

/** Reads `<home>/config.json`; a missing file is an empty config, a broken one an error that says where. */
export async function loadConfig(home: string): Promise<WaymarkConfig> {
  const file = join(home, "config.json");
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (error) {
    // a missing file is an empty one: the defaults below apply
    if ((error as { code?: string }).code !== "ENOENT") throw error;
    text = "{}";
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
      }. Allowed keys: workflowDirs (string[]), preferences ({autonomy, riskPolicy}), retention ({olderThan}), jobDirs (string[]), verification ({workspaces: {"/abs/folder": {allow, timeoutSeconds, outputBytes, env}}, maxConcurrent}), cost ({transcripts, tokenBudget, transcriptWaitMs}), auth ({resource, issuer, jwksUrl, scopes, personalTokens, jwksTimeoutMs, clockToleranceSeconds}), snapshots ({enabled, budgetMs}).`,
    );
  }
  const olderThan = parsed.data.retention?.olderThan;
  const age = olderThan === undefined ? null : retentionAge.safeParse(olderThan);
  if (age && !age.success) throw new Error(`${file}: ${age.error.issues[0]!.message}`);
  const verification = verificationPolicy(file, parsed.data.verification);
  return {
    verification,
    auth: parsed.data.auth ?? {},
    cost: {
      transcripts: parsed.data.cost?.transcripts ?? true,
      tokenBudget: parsed.data.cost?.tokenBudget ?? null,
      transcriptWaitMs: parsed.data.cost?.transcriptWaitMs ?? TRANSCRIPT_WAIT_MS,
    },
    snapshots: {
      enabled: parsed.data.snapshots?.enabled ?? true,
      budgetMs: parsed.data.snapshots?.budgetMs,
    },
    retention: olderThan && age?.success ? { olderThan, olderThanMs: age.data } : null,
    workflowDirs: (parsed.data.workflowDirs ?? []).map((dir) =>
      isAbsolute(dir) ? dir : join(home, dir)
    ),
    preferences: parsed.data.preferences ?? {},
    jobDirs: (parsed.data.jobDirs ?? []).map((dir) => isAbsolute(dir) ? dir : join(home, dir)),
  };
}

/** The verification policy of the file: workspace keys must be absolute folders. */
function verificationPolicy(
  file: string,
  section: z.infer<typeof verificationSettingsSchema> | undefined,
): VerificationPolicy {
  if (!section) return { workspaces: [] };
  for (const key of Object.keys(section.workspaces)) {
    if (!isAbsolute(key)) {
      throw new Error(
        `${file}: verification.workspaces: ${
          JSON.stringify(key)
        } is not an absolute folder; name each workspace by its absolute path`,
      );
    }
  }
  const parsed = parsePolicy(section, (key) => resolve(key));
  if (!parsed.ok) throw new Error(`${file}: ${parsed.message}`);
  return parsed.policy;
}
