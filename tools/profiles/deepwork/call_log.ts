/**
 * The DeepWork profile's call log: each call writes one line to stderr with the tool name, its
 * outcome and the caller's workflow stack (DeepWork logs every call with the stack state).
 * @module
 */
import { findStack } from "../../../engine/deepwork/find_stack.ts";
import type { JobPorts } from "../../../engine/deepwork/ports.ts";
import type { StackEntry } from "../../../engine/deepwork/job_responses.ts";
import { stackEntries } from "../../../engine/deepwork/stack.ts";
import type { EngineDeps } from "../../../engine/model/ports.ts";
import type { Result } from "../../../engine/model/result.ts";
import type { WorkspaceObservation } from "../../../engine/model/workspace.ts";
import type { ToolContext } from "../../calls/define_tool.ts";

function stackText(stack: readonly StackEntry[] | undefined): string {
  if (!stack) return "-";
  return stack.length === 0 ? "(empty)" : stack.map((s) => `${s.workflow}@${s.step}`).join(" > ");
}

/** What a call's log line needs besides its result. */
export interface CallAt {
  /** The tool. */
  tool: string;
  /** Where log lines go. */
  log: ((line: string) => void) | undefined;
  /** The engine (to read the stack when the answer does not carry it). */
  deps: EngineDeps;
  /** The call's input (its `session_id` and `agent_id` pick the stack). */
  input: { session_id?: string; agent_id?: string };
  /** The call's context. */
  ctx: ToolContext;
  /** The caller's connection. */
  presence: JobPorts["presence"];
}

/**
 * Logs a call with its tool name and the caller's stack: the one the answer carries, else (an
 * error, get_workflows) the one the store holds now.
 */
export async function logged<T>(at: CallAt, result: Result<T>): Promise<Result<T>> {
  if (!at.log) return result;
  let stack = result.ok ? (result.value as { stack?: StackEntry[] }).stack : undefined;
  if (!stack) {
    const found = await findStack({ store: at.deps.store, presence: at.presence }, {
      sessionId: at.input.session_id,
      agentId: at.input.agent_id,
      workspace: here(at.ctx).workspace,
    }, { claim: false }).catch(() => null);
    if (found?.ok) stack = stackEntries(found.value.view.frames);
  }
  const outcome = result.ok ? "ok" : `${result.error.code}: ${result.error.message.split("\n")[0]}`;
  at.log(`deepwork ${at.tool}: ${outcome}; stack: ${stackText(stack)}`);
  return result;
}

/** The call's workspace observation (no workspace: all `null`). */
export function here(ctx: ToolContext): WorkspaceObservation {
  return ctx.workspace ?? { workspace: null, gitBranch: null, gitHeadSha: null };
}
