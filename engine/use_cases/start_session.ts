/**
 * `start_session` (behind a flag): a checkpoint-only session for durable notes before any
 * workflow. It is a run of a built-in one-step workflow, `waymark.session`, so checkpoints,
 * rehydrates, recaps and `resume_session` all work on it unchanged; acknowledging its step
 * closes it.
 * @module
 */
import { hashJson } from "../common/hash.ts";
import type { EngineDeps } from "../model/ports.ts";
import type { PreferencesPatch } from "../model/preferences.ts";
import type { Result } from "../model/result.ts";
import type { StepResponse } from "../answers/responses.ts";
import { beginRun, type StartOptions } from "./start_workflow.ts";
import { guard } from "../run/error_guard.ts";
import { SESSION_NOTES_WORKFLOW } from "../run/session_notes.ts";

/** Input of {@linkcode startSession}. */
export interface StartSessionInput {
  /** What the session is about; becomes its title (and is searchable by resume_session). */
  title?: string;
  /** Preferences for this session, over the defaults. */
  preferences?: PreferencesPatch;
}

/** Opens a checkpoint-only session. */
export function startSession(
  deps: EngineDeps,
  input: StartSessionInput,
  options: StartOptions = {},
): Promise<Result<StepResponse>> {
  return guard(async () => {
    const compiled = SESSION_NOTES_WORKFLOW;
    return await beginRun(deps, {
      compiled,
      hash: await hashJson(compiled),
      warnings: [],
      title: input.title ?? compiled.name,
      goal: input.title ?? null,
      context: {},
      preferences: input.preferences,
      sessionKind: "notes",
    }, options);
  });
}
