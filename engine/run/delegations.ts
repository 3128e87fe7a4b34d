/**
 * Delegation: a parallel step opens one child run per delegation that applies, in the parent's
 * session, when a node arrives at it. The parent's step stays pending until every child is
 * complete or aborted; the last child to end records that once; the synthesis step after it is
 * handed each child's final notes and artifacts, kept at its node so rehydrates and replays
 * read the same text. Workflows are looked up before a write, never inside one.
 * @module
 */
import type { DelegationDigest, DomainEvent } from "../model/events.ts";
import { deriveNodeId } from "../model/ids.ts";
import { LIMITS, utf8Bytes } from "../model/limits.ts";
import type {
  DelegatedRun,
  DelegationLink,
  EngineDeps,
  NodeRecord,
  StoreReader,
} from "../model/ports.ts";
import { truncateBytes } from "../gates/enforce.ts";
import type { Warning } from "../workflow/catalog.ts";
import type { LoadedWorkflow } from "../workflow/catalog.ts";
import type { CompiledDelegation, CompiledStep, CompiledWorkflow } from "../workflow/compiled.ts";
import { fail, ok, type Result } from "../model/result.ts";
import { evaluateCondition } from "../workflow/conditions.ts";
import { allSteps, currentStep, effectiveContext, initialState } from "../workflow/interpreter.ts";
import { lookupWorkflow } from "../use_cases/inspect_workflow.ts";
import { nodeCreated } from "./node_events.ts";
import type { DelegationStatus, RunStatus } from "../model/vocabulary.ts";

/** The workflows a run's delegations may open, by id (`null`: none has that id), loaded before a write. */
export type Delegates = ReadonlyMap<string, LoadedWorkflow | null>;

const NONE: Delegates = new Map();

const IDS = new WeakMap<CompiledWorkflow, Set<string>>();

/** The workflow ids a compiled workflow's parallel steps delegate to (walked once per object). */
export function delegatedIds(compiled: CompiledWorkflow): ReadonlySet<string> {
  let ids = IDS.get(compiled);
  if (!ids) {
    ids = new Set(
      allSteps(compiled).flatMap((s) => (s.delegations ?? []).map((d) => d.workflowId)),
    );
    IDS.set(compiled, ids);
  }
  return ids;
}

/**
 * Looks up every workflow a run of `compiled` may delegate to, and theirs in turn (to the
 * nesting limit), and refuses a workflow with a parallel step that would open more runs in one
 * call than {@linkcode LIMITS.runsOpenedAtOnce}. A workflow without parallel steps costs nothing.
 */
export async function loadDelegates(
  deps: Pick<EngineDeps, "workflows">,
  compiled: CompiledWorkflow,
): Promise<Result<Delegates>> {
  let wanted = delegatedIds(compiled);
  if (wanted.size === 0) return ok(NONE);
  const out = new Map<string, LoadedWorkflow | null>();
  for (let depth = 0; depth < LIMITS.delegationDepth && wanted.size > 0; depth++) {
    const next = new Set<string>();
    for (const id of wanted) {
      if (out.has(id)) continue;
      const found = await lookupWorkflow(deps.workflows, id);
      out.set(id, found.ok ? found.value : null);
      if (found.ok) { for (const more of delegatedIds(found.value.compiled)) next.add(more); }
    }
    wanted = next;
  }
  const wide = tooWide(compiled, out);
  return wide ? fanOutRefused(compiled.id, wide) : ok(out);
}

/** The id of a parallel step of `compiled` that opens more runs at once than allowed, or `null`. */
export function tooWide(
  compiled: CompiledWorkflow,
  delegates: Delegates,
): string | null {
  const step = allSteps(compiled).find((s) =>
    runsOpenedBy(s, delegates, 0) > LIMITS.runsOpenedAtOnce
  );
  return step?.id ?? null;
}

/** The message for a parallel step past the bound, shared by tools and `workflows validate`. */
export function fanOutMessage(workflowId: string, stepId: string): string {
  return `Step \`${stepId}\` of \`${workflowId}\` would open more than ${LIMITS.runsOpenedAtOnce} child runs in one call (its delegations and, nested, those of each child whose first step is itself a parallel step), and one call opens at most ${LIMITS.runsOpenedAtOnce}. It fails the same way every time: fewer delegations, or a plain step before a child's own parallel step, bring it under the bound.`;
}

function fanOutRefused(workflowId: string, stepId: string): Result<never> {
  return fail("DELEGATION_LIMIT_EXCEEDED", fanOutMessage(workflowId, stepId), {
    details: { workflowId, stepId, limit: LIMITS.runsOpenedAtOnce },
  });
}

/**
 * The runs arriving at `step` opens in one call, counting every delegation whose workflow is
 * known (conditions taken as holding) and, nested, each child's own first step; stops counting
 * once past the bound, so a recursive fan-out costs at most that many steps.
 */
function runsOpenedBy(step: CompiledStep | null, delegates: Delegates, depth: number): number {
  if (!step?.delegations || depth >= LIMITS.delegationDepth) return 0;
  let runs = 0;
  for (const d of step.delegations) {
    const loaded = delegates.get(d.workflowId);
    if (!loaded) continue;
    const first = currentStep(loaded.compiled, initialState(loaded.compiled, d.args ?? {}));
    runs += 1 + runsOpenedBy(first, delegates, depth + 1);
    if (runs > LIMITS.runsOpenedAtOnce) return runs;
  }
  return runs;
}

/** The child's context: the parent's keys mapped through `contextMapping`, then `args`. */
function childContext(
  d: CompiledDelegation,
  parent: Record<string, unknown>,
): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [from, to] of Object.entries(d.contextMapping ?? {})) {
    if (parent[from] !== undefined) out[to] = parent[from];
  }
  return { ...out, ...(d.args ?? {}) };
}

/** The id of a delegation's child run, derived so racing writers agree on it. */
function childRunId(
  parent: Pick<NodeRecord, "runId" | "nodeId">,
  index: number,
): Promise<string> {
  return deriveNodeId(["delegation", parent.runId, parent.nodeId, String(index)]);
}

/** The root node id of a run. */
function rootNodeId(runId: string): Promise<string> {
  return deriveNodeId(["root", runId]);
}

/** What opening a node's delegations appends, and the notices for those it could not open. */
export interface Opened {
  /** Events: each child's run, pin, root node and link (and its own children's, nested). */
  events: DomainEvent[];
  /** `DELEGATION_UNAVAILABLE` for each delegation whose workflow is not in the library. */
  warnings: Warning[];
  /** The children opened at this node (not nested ones), as their parent lists them. */
  children: DelegatedRun[];
}

/** Where children are being opened: the parent's workflow, the delegates, what is pinned. */
interface OpenAt {
  compiled: CompiledWorkflow;
  delegates: Delegates;
  pinned?: Set<string>;
  depth?: number;
}

/**
 * Opens the child runs of the parallel step pending at `parent` (a node being created), one per
 * delegation whose condition holds. `pinned` names the snapshots this write already carries.
 */
export async function openChildren(
  tx: Pick<StoreReader, "hasSnapshot">,
  parent: NodeRecord,
  at: OpenAt,
): Promise<Opened> {
  const step = currentStep(at.compiled, parent.state);
  const opened: Opened = { events: [], warnings: [], children: [] };
  if (!step?.delegations || (at.depth ?? 0) >= LIMITS.delegationDepth) return opened;
  const context = effectiveContext(at.compiled, parent.state, parent.context);
  const here = { ...at, pinned: at.pinned ?? new Set<string>() };
  for (const [index, d] of step.delegations.entries()) {
    if (d.runCondition !== undefined && !evaluateCondition(d.runCondition, context)) continue;
    const loaded = at.delegates.get(d.workflowId);
    if (!loaded) opened.warnings.push(unavailable(d.workflowId, step.id));
    else {
      const root = await childRoot(parent, { index, loaded, context: childContext(d, context) });
      const one = await openChild(tx, root, { ...here, parent, stepId: step.id, index, d, loaded });
      opened.events.push(...one.events);
      opened.warnings.push(...one.warnings);
      opened.children.push(one.child);
    }
  }
  return opened;
}

/** One child: its run's events and link, its own children (nested), and its entry. */
async function openChild(
  tx: Pick<StoreReader, "hasSnapshot">,
  root: NodeRecord,
  at: Required<Pick<OpenAt, "pinned">> & OpenAt & {
    parent: NodeRecord;
    stepId: string;
    index: number;
    d: CompiledDelegation;
    loaded: LoadedWorkflow;
  },
): Promise<{ events: DomainEvent[]; warnings: Warning[]; child: DelegatedRun }> {
  const { parent, stepId, index, loaded } = at;
  const goal = at.d.goal ?? null;
  const fresh = !at.pinned.has(loaded.hash) && !(await tx.hasSnapshot(loaded.hash));
  at.pinned.add(loaded.hash);
  const link: DomainEvent = {
    kind: "run_delegated",
    sessionId: parent.sessionId,
    runId: root.runId,
    parentRunId: parent.runId,
    parentNodeId: parent.nodeId,
    stepId,
    index,
  };
  const nested = await openChildren(tx, root, {
    compiled: loaded.compiled,
    delegates: at.delegates,
    pinned: at.pinned,
    depth: (at.depth ?? 0) + 1,
  });
  return {
    events: [...childEvents(root, { loaded, goal, fresh }), link, ...nested.events],
    warnings: nested.warnings,
    child: {
      runId: root.runId,
      sessionId: root.sessionId,
      index,
      stepId,
      workflowId: loaded.compiled.id,
      goal,
      status: "running",
      tipNodeId: root.nodeId,
      rootNodeId: root.nodeId,
      finalNodeId: null,
      abortExplanation: null,
    },
  };
}

function unavailable(workflowId: string, stepId: string): Warning {
  return {
    code: "DELEGATION_UNAVAILABLE",
    message:
      `Step \`${stepId}\` delegates to \`${workflowId}\`, which no workflow directory provides, so no child run was opened for it: do that part yourself, as the prompt describes.`,
  };
}

async function childRoot(
  parent: NodeRecord,
  at: { index: number; loaded: LoadedWorkflow; context: Record<string, unknown> },
): Promise<NodeRecord> {
  const runId = await childRunId(parent, at.index);
  const state = initialState(at.loaded.compiled, at.context);
  return {
    sessionId: parent.sessionId,
    runId,
    nodeId: await rootNodeId(runId),
    parentId: null,
    nodeKind: "step",
    depth: 0,
    state,
    context: at.context,
    preferences: parent.preferences,
    pendingStepId: currentStep(at.loaded.compiled, state)?.id ?? null,
    edgeKind: null,
    notesMarkdown: null,
    notesStepId: null,
  };
}

function childEvents(
  root: NodeRecord,
  at: { loaded: LoadedWorkflow; goal: string | null; fresh: boolean },
): DomainEvent[] {
  const { sessionId, runId } = root;
  return [
    {
      kind: "run_started",
      sessionId,
      runId,
      workflowId: at.loaded.compiled.id,
      workflowHash: at.loaded.hash,
      goal: at.goal,
    },
    {
      kind: "workflow_pinned",
      sessionId,
      runId,
      workflowHash: at.loaded.hash,
      compiled: at.fresh ? at.loaded.compiled : null,
    },
    ...nodeCreated(root),
  ];
}

/**
 * The node a parallel step's children hang from: the step node the run arrived at, above any
 * checkpoints or blocked attempts made there since.
 */
export async function delegationHome(
  reader: Pick<StoreReader, "getStepAnchorId">,
  node: Pick<NodeRecord, "runId" | "nodeId" | "nodeKind" | "parentId">,
): Promise<{ runId: string; nodeId: string }> {
  if (node.nodeKind === "step" || node.parentId === null) return node;
  // from the parent: the node may be one this write is still creating
  return { runId: node.runId, nodeId: await reader.getStepAnchorId(node.runId, node.parentId) };
}

/** Whether a child has ended: complete, or aborted with a reason. */
export function hasEnded(child: Pick<DelegatedRun, "status">): boolean {
  return child.status !== "running";
}

/** A child run's status as its parent sees it: `open` until it completes or is aborted. */
export function delegationStatusOf(status: RunStatus): DelegationStatus {
  return status === "running" ? "open" : status;
}

/**
 * `delegations_settled` at the parent, when the run ending now (completing or aborted in this
 * write) is the last of its siblings to end and nothing recorded it before.
 */
export async function settledEvents(
  tx: Pick<StoreReader, "getDelegations" | "getNodeEvents">,
  at: { ending: { sessionId: string; runId: string }; link: DelegationLink },
): Promise<DomainEvent[]> {
  const { ending, link } = at;
  const siblings = await tx.getDelegations(link.parentRunId, link.parentNodeId);
  if (siblings.some((s) => s.runId !== ending.runId && !hasEnded(s))) return [];
  const recorded = await tx.getNodeEvents(link.parentRunId, link.parentNodeId);
  if (recorded.some((e) => e.kind === "delegations_settled")) return [];
  return [{
    kind: "delegations_settled",
    sessionId: ending.sessionId,
    runId: link.parentRunId,
    nodeId: link.parentNodeId,
    stepId: link.stepId,
    by: ending.runId,
  }];
}

/** Each ended child's final notes and artifacts, each cut to its budget (truncation said). */
export async function collectDigest(
  reader: Pick<StoreReader, "getNode" | "getBranchOutputs">,
  children: readonly DelegatedRun[],
): Promise<DelegationDigest[]> {
  const out: DelegationDigest[] = [];
  for (const c of children) {
    if (!hasEnded(c)) continue;
    const base = { runId: c.runId, index: c.index, workflowId: c.workflowId, goal: c.goal };
    if (c.status === "aborted" || c.finalNodeId === null) {
      const notes = cut(c.abortExplanation ?? "");
      out.push({
        ...base,
        status: "aborted",
        notesMarkdown: notes.text,
        artifacts: [],
        truncated: notes.cut,
      });
      continue;
    }
    const final = await reader.getNode(c.runId, c.finalNodeId);
    const outputs = await reader.getBranchOutputs(c.runId, c.finalNodeId, 1);
    const artifacts = outputs.find((o) => o.nodeId === c.finalNodeId)?.artifacts ?? [];
    const notes = cut(final?.notesMarkdown ?? "");
    const room = LIMITS.delegationDigestBytes - utf8Bytes(notes.text);
    const fits = utf8Bytes(JSON.stringify(artifacts)) <= room;
    out.push({
      ...base,
      status: "complete",
      notesMarkdown: notes.text,
      artifacts: fits ? artifacts : [],
      truncated: notes.cut || !fits,
    });
  }
  return out;
}

function cut(text: string): { text: string; cut: boolean } {
  if (utf8Bytes(text) <= LIMITS.delegationDigestBytes) return { text, cut: false };
  return { text: truncateBytes(text, LIMITS.delegationDigestBytes), cut: true };
}
