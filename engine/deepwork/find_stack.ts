/**
 * Which stack a DeepWork call acts on. Each agent has its own: a stack is held by the
 * connection that started it (its `owner`), and a call without `session_id` acts only on its
 * caller's stack, never on another live agent's. A caller with no running stack of its own takes
 * over a stack whose holder is gone (a server that crashed or was restarted) when exactly one
 * fits; with several it names them and asks. `session_id` (a workflow's `run_…`) reaches any
 * workflow, wherever it sits on whichever stack, and takes its stack over when its holder is gone.
 * @module
 */
import { parseRunLabel, runLabel } from "../model/ids.ts";
import type { StackFrame, StackSummary, StackView, Store } from "../model/ports.ts";
import { fail, ok, type Result } from "../model/result.ts";
import type { AgentPresence } from "./ports.ts";

/** Who is calling and where: what picks a stack. */
export interface StackCaller {
  /** `session_id` as the agent passed it (a workflow's `run_…`), when it did. */
  sessionId?: string;
  /** `agent_id`: a sub-agent's own stack; absent for the main agent. */
  agentId?: string;
  /** The caller's workspace folder. */
  workspace: string | null;
}

/** The caller named by a DeepWork tool's arguments (`session_id`, `agent_id`) and workspace. */
export function stackCaller(
  input: { session_id?: string; agent_id?: string; workspace: { workspace: string | null } },
): StackCaller {
  return {
    sessionId: input.session_id,
    agentId: input.agent_id,
    workspace: input.workspace.workspace,
  };
}

/** A stack found for a caller, and the workflow on it the call acts on. */
export interface FoundStack {
  /** The stack's session (hex), or `null` when the caller has no stack yet. */
  sessionId: string | null;
  /** The agent whose stack it is. */
  agentId: string | null;
  /** Who holds it (`presence.self` for a new stack). */
  owner: string;
  /** Its frames. */
  view: StackView;
  /** The running workflow the call acts on: the one `session_id` names, else the top. */
  target: StackFrame | null;
  /** The workflow whose completing answer a retry may get again (see `finish.ts`). */
  finished: StackFrame | null;
}

/** What finding a stack needs: the store (to take a stack over) and who is calling. */
export interface FindDeps {
  /** The store. */
  store: Store;
  /** The caller's connection and which holders are live. */
  presence: AgentPresence;
}

/** Running runs read when looking for stacks left by agents that are gone. */
const SCAN_LIMIT = 200;
/** Stacks named when the choice is the caller's. */
const MAX_CANDIDATES = 20;

const EMPTY: StackView = { frames: [], lastFinished: null };

function found(
  at: { sessionId: string | null; agentId: string | null; owner: string },
  view: StackView,
): FoundStack {
  return { ...at, view, target: view.frames.at(-1) ?? null, finished: view.lastFinished };
}

/** The stack of the workflow `session_id` names (whatever its holder), that workflow targeted. */
async function named(deps: FindDeps, text: string, claim: boolean): Promise<Result<FoundStack>> {
  const runId = parseRunLabel(text);
  const frame = runId ? await deps.store.getStackFrame(runId) : null;
  if (!frame) {
    return fail(
      "NO_ACTIVE_WORKFLOW",
      `There is no workflow session \`${text}\` in this database. Pass the session_id that begin_step returned (\`run_…\`), or omit it to act on your own stack.`,
      { details: { session_id: text } },
    );
  }
  const at = { sessionId: frame.sessionId, agentId: frame.agentId, owner: frame.owner };
  if (claim && orphaned(deps.presence, frame.owner)) {
    if (await takeOver(deps, at)) at.owner = deps.presence.self;
  }
  const view = await deps.store.getStack(frame.sessionId, frame.agentId);
  const running = view.frames.find((f) => f.runId === frame.runId) ?? null;
  return ok({ ...at, view, target: running, finished: running ? null : frame });
}

function orphaned(presence: AgentPresence, owner: string): boolean {
  return owner !== presence.self && !presence.isLive(owner);
}

/** Records that the caller holds a stack now, unless another caller took it first. */
function takeOver(
  deps: FindDeps,
  stack: { sessionId: string; agentId: string | null; owner: string },
): Promise<boolean> {
  return deps.store.write(async (tx) => {
    const view = await tx.getStack(stack.sessionId, stack.agentId);
    const holder = view.frames[0]?.owner ?? view.lastFinished?.owner;
    if (holder !== stack.owner) return false;
    await tx.append([{
      kind: "stack_claimed",
      sessionId: stack.sessionId,
      agentId: stack.agentId,
      from: stack.owner,
      owner: deps.presence.self,
    }]);
    return true;
  });
}

/** The refusal to guess between stacks left by agents that are gone. */
function ambiguous(candidates: readonly StackSummary[]): Result<never> {
  const listed = candidates.slice(0, MAX_CANDIDATES).map((c) => {
    const dot = c.workflowId.indexOf(".");
    return {
      session_id: runLabel(c.runId),
      job: dot < 0 ? c.workflowId : c.workflowId.slice(0, dot),
      workflow: dot < 0 ? c.workflowId : c.workflowId.slice(dot + 1),
      step: c.pendingStepId,
      last_activity: c.updatedAt,
    };
  });
  return fail(
    "NO_ACTIVE_WORKFLOW",
    `You have no running workflow of your own here, and ${candidates.length} workflow stacks in this project were left by agents that are gone (a server that crashed or was restarted); which one is yours cannot be told. Call again with session_id set to one of: ${
      listed.map((c) =>
        `${c.session_id} (${c.job}/${c.workflow} at step ${c.step}, last active ${c.last_activity})`
      )
        .join("; ")
    }. That call takes the stack over, and later calls without session_id act on it.`,
    { details: { reason: "several_orphaned_stacks", candidates: listed } },
  );
}

/**
 * The stack a call acts on. `session_id` names a workflow anywhere. Otherwise the caller's own
 * stack with a running workflow; else, when `claim` (calls that act on a workflow), the one
 * stack whose holder is gone, taken over (several: the refusal naming them); else the caller's
 * last stack, or the workspace's last one when its holder is gone, for a retry's answer.
 */
export async function findStack(
  deps: FindDeps,
  caller: StackCaller,
  options: { claim: boolean },
): Promise<Result<FoundStack>> {
  if (caller.sessionId !== undefined) return await named(deps, caller.sessionId, options.claim);
  const { store, presence } = deps;
  const agentId = caller.agentId ?? null;
  const where = caller.workspace;
  const own = await store.findStackSession(where, { agentId, owner: presence.self });
  const ownView = own ? await store.getStack(own, agentId) : null;
  const mine = { agentId, owner: presence.self };
  if (own && ownView && ownView.frames.length > 0) {
    return ok(found({ sessionId: own, ...mine }, ownView));
  }
  if (options.claim) {
    const orphans = (await store.listStacks(where, { agentId, limit: SCAN_LIMIT }))
      .filter((s) => orphaned(presence, s.owner));
    if (orphans.length > 1) return ambiguous(orphans);
    const orphan = orphans[0];
    if (orphan && await takeOver(deps, orphan)) {
      const view = await store.getStack(orphan.sessionId, agentId);
      return ok(found({ sessionId: orphan.sessionId, ...mine }, view));
    }
  }
  if (own && ownView) return ok(found({ sessionId: own, ...mine }, ownView));
  const last = await store.findStackSession(where, { agentId, owner: null });
  const lastView = last ? await store.getStack(last, agentId) : null;
  const holder = lastView?.lastFinished?.owner;
  if (last && lastView && lastView.frames.length === 0 && holder !== undefined) {
    if (!orphaned(presence, holder)) return ok(found({ sessionId: null, ...mine }, EMPTY));
    return ok(found({ sessionId: last, agentId, owner: holder }, lastView));
  }
  return ok(found({ sessionId: null, ...mine }, EMPTY));
}
