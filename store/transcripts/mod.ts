/**
 * The usage meter a server gets: Claude Code's transcript when the host that started this
 * process named its session in the environment and the user's config does not turn reading
 * off; otherwise none (no tokens are counted). Other hosts expose nothing a server can tie to
 * its session (docs/cost.md).
 * @module
 */
import type { EngineDeps } from "../../engine/model/ports.ts";
import { claudeCodeMeter } from "./claude_code.ts";

/** The `cost` settings of `config.json`. */
export interface CostSettings {
  /** Whether transcripts are read. */
  transcripts: boolean;
  /** The runs' token budget, or `null`. */
  tokenBudget: number | null;
  /** How long an acknowledgement waits for its model call to reach the transcript (ms). */
  transcriptWaitMs: number;
}

/** The engine's usage dependencies for this process. */
export function usageDeps(
  settings: CostSettings,
  at: { env: Record<string, string | undefined>; cwd: string },
): Pick<EngineDeps, "usage" | "tokenBudget"> {
  const usage = settings.transcripts
    ? claudeCodeMeter({
      env: at.env,
      cwd: at.cwd,
      waitMs: settings.transcriptWaitMs,
    })
    : null;
  return {
    ...(usage ? { usage } : {}),
    ...(settings.tokenBudget === null ? {} : { tokenBudget: settings.tokenBudget }),
  };
}
