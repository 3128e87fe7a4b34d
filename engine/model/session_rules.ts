/**
 * The rules every session built over MCP satisfies, written once: import checks a bundle's
 * events against them before anything is written, and `waymark doctor` checks every stored
 * session against the same function. A session satisfies them when each event is of a known
 * kind, at a real time no later than now (allowing a day of clock skew), of its kind's shape
 * and within the caps of `limits.ts`; runs are started before use and pin a carried workflow
 * whose id is an id; nodes are unique, hang from an earlier node at the next depth, stand at a
 * position of their workflow and carry their context or name one their run logged; every
 * reference (edges, outputs, attempts, stacks) names a node or run of this session; and no row
 * the projections keep unique is made twice. Pure: the events are read as the log holds them.
 * @module
 */
import { z } from "npm:zod@4.6.7";
import { tokenUsageSchema } from "../cost/usage.ts";
import { sha256HexSync } from "../common/hash.ts";
import { ID_HEX } from "./ids.ts";
import { checkOutput, jsonDepth, LIMITS } from "./limits.ts";
import { preferencesSchema } from "./preferences.ts";
import {
  ADVANCE_OUTCOMES,
  CAPABILITIES,
  CAPABILITY_STATUSES,
  EDGE_KINDS,
  EVENT_KINDS,
  GAP_SEVERITIES,
  isMember,
  NODE_KINDS,
  REVIEW_VERDICTS,
  REVIEWERS,
  SESSION_KINDS,
  VERIFICATION_VERDICTS,
} from "./vocabulary.ts";
import type { CompiledWorkflow } from "../workflow/compiled.ts";
import { positionProblem, stepIds } from "../workflow/positions.ts";
import { REVIEW_ID } from "../review/plan.ts";
import { SNAPSHOT_LIMITS } from "./snapshots.ts";

/** One event as logged (a bundle's, or a log row's): its position, kind, time and payload. */
export interface RuleEvent {
  /** Its position in the session, from 1. */
  readonly n: number;
  /** Its kind. */
  readonly kind: string;
  /** Its append time. */
  readonly at: string;
  /** The event as logged. */
  readonly payload: Record<string, unknown>;
}

/** The first rule a session breaks. */
export interface RuleViolation {
  /** The event that breaks it (its position, from 1), or `null` for the session as a whole. */
  n: number | null;
  /** Which rule, for machines (`unknown_kind`, `bad_time`, `too_deep`, ...). */
  rule: string;
  /** What is wrong, in words, naming the event. */
  message: string;
}

/** How far ahead of now an event's time may be: clocks of two machines disagree. */
export const CLOCK_SKEW_MS = 24 * 60 * 60 * 1000;

/** Payload nesting beyond what the caps allow: the deepest capped value sits three levels in. */
const PAYLOAD_DEPTH = LIMITS.depth + 3;

const TIME = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})\.(\d{3})Z$/;
const DAY_MS = 86_400_000;

/** Milliseconds since the epoch of a time as waymark writes it (`toISOString`), or `null`. */
function isoTime(text: string): number | null {
  const m = TIME.exec(text);
  if (!m) return null;
  const [y, mo, d, h, mi, s, ms] = m.slice(1).map(Number) as number[];
  const days = (Date.UTC(y!, mo!, 1) - Date.UTC(y!, mo! - 1, 1)) / DAY_MS;
  const fits = mo! >= 1 && mo! <= 12 && d! >= 1 && d! <= days && h! < 24 && mi! < 60 && s! < 60;
  return fits ? Date.UTC(y!, mo! - 1, d!, h!, mi!, s!, ms!) : null;
}
/** A workflow id any source makes: a legacy id, `namespace.name`, or a DeepWork `job.workflow`. */
const WORKFLOW_ID = /^[A-Za-z0-9][A-Za-z0-9_-]{0,127}(?:\.[A-Za-z0-9][A-Za-z0-9_-]{0,127})?$/;

const hex16 = z.string().regex(ID_HEX);
const inSession = { sessionId: hex16 };
const inRun = { ...inSession, runId: hex16 };
const atNode = { ...inRun, nodeId: hex16 };
const stepId = z.string().nullable();
const attempt = { ...atNode, attemptId: z.string().min(1), resultNodeId: hex16 };

/** The fields the rules read, per kind (others are carried as they are). */
const PAYLOADS: Record<typeof EVENT_KINDS[number], z.ZodType> = {
  session_created: z.looseObject({
    ...inSession,
    title: z.string(),
    sessionKind: z.enum(SESSION_KINDS).optional(),
  }),
  run_started: z.looseObject({
    ...inRun,
    workflowId: z.string().regex(WORKFLOW_ID, "is not a workflow id"),
    workflowHash: z.string(),
    goal: z.string().max(LIMITS.titleChars).nullable(),
  }),
  workflow_pinned: z.looseObject({ ...inRun, workflowHash: z.string() }),
  node_created: z.looseObject({
    ...atNode,
    parentId: hex16.nullable(),
    nodeKind: z.enum(NODE_KINDS),
    depth: z.number().int().min(0),
    contextId: z.string().regex(/^[0-9a-f]{64}$/).optional(),
    context: z.record(z.string(), z.unknown()).optional(),
    preferences: preferencesSchema,
    pendingStepId: stepId,
  }),
  edge_created: z.looseObject({
    ...inRun,
    fromId: hex16,
    toId: hex16,
    edgeKind: z.enum(EDGE_KINDS),
  }),
  output_recorded: z.looseObject({
    ...atNode,
    stepId,
    notesMarkdown: z.string().nullable(),
    artifacts: z.array(z.record(z.string(), z.unknown())),
  }),
  observation_recorded: z.looseObject(atNode),
  preference_changed: z.looseObject(atNode),
  advance_recorded: z.looseObject({
    ...attempt,
    outcome: z.enum(ADVANCE_OUTCOMES),
    response: z.string(),
  }),
  gap_recorded: z.looseObject({ ...atNode, severity: z.enum(GAP_SEVERITIES), message: z.string() }),
  capability_observed: z.looseObject({
    ...atNode,
    capability: z.enum(CAPABILITIES),
    status: z.enum(CAPABILITY_STATUSES),
  }),
  divergence_recorded: z.looseObject(atNode),
  assessment_recorded: z.looseObject({ ...atNode, assessmentId: z.string() }),
  checkpoint_recorded: z.looseObject({ ...attempt, response: z.string() }),
  run_stacked: z.looseObject({
    ...inRun,
    parentRunId: hex16.nullable(),
    parentNodeId: hex16.nullable(),
  }),
  run_aborted: z.looseObject({ ...atNode, explanation: z.string() }),
  stack_claimed: z.looseObject({
    ...inSession,
    agentId: z.string().nullable(),
    from: z.string(),
    owner: z.string(),
  }),
  review_recorded: z.looseObject({
    ...atNode,
    reviewer: z.enum(REVIEWERS),
    verdict: z.enum(REVIEW_VERDICTS),
    attempt: z.number().int().min(1),
  }),
  run_delegated: z.looseObject({
    ...inRun,
    parentRunId: hex16,
    parentNodeId: hex16,
    stepId: z.string(),
    index: z.number().int().min(0).max(LIMITS.delegations - 1),
  }),
  delegations_settled: z.looseObject({ ...atNode, by: hex16 }),
  delegations_collected: z.looseObject({
    ...atNode,
    children: z.array(z.looseObject({ runId: hex16 })).max(LIMITS.delegations),
  }),
  usage_recorded: z.looseObject({
    ...atNode,
    usage: tokenUsageSchema.nullable(),
    runTotal: tokenUsageSchema.nullable(),
  }),
  evidence_recorded: z.looseObject({
    ...atNode,
    attemptId: z.string().min(1),
    verdict: z.enum(VERIFICATION_VERDICTS),
    command: z.array(z.string()).min(1),
    exitCode: z.number().int().nullable(),
  }),
  snapshot_recorded: z.looseObject({
    ...atNode,
    snapshot: z.looseObject({
      commit: z.string().regex(/^[0-9a-f]{40,64}$/).nullable(),
      dirty: z.boolean(),
      workspace: z.string(),
    }),
    changes: z.looseObject({ diff: z.string().max(SNAPSHOT_LIMITS.diffBytes + 256) }).nullable(),
  }),
  review_passed: z.looseObject({
    ...inSession,
    reviewId: z.string().regex(REVIEW_ID, "is not a review id"),
    rule: z.string().min(1),
    definedIn: z.string().min(1),
    files: z.array(z.looseObject({ path: z.string().min(1), sha256: z.string() })).min(1)
      .max(LIMITS.outputFiles),
  }),
};

/** What the rules know of one run so far. */
interface RunFacts {
  workflow: CompiledWorkflow | undefined;
  /** Its workflow's step ids (read once per workflow). */
  steps: Set<string> | undefined;
  nodes: Map<string, number>;
  contexts: Set<string>;
  /** Rows the projections keep unique: `edge:TO`, `output:NODE`, `attempt:…`, `stacked`. */
  unique: Set<string>;
  /** Nodes named by events, checked once every node is known. */
  named: { n: number; nodeId: string; what: string }[];
}

type Payload = Record<string, unknown>;

/** The session's state as the events are read, and the checks of each event. */
class Rules {
  readonly runs = new Map<string, RunFacts>();
  readonly #steps = new Map<CompiledWorkflow, Set<string>>();
  /** Review ids passed (the projection keeps one pass per review per session). */
  readonly passes = new Set<string>();
  sessionId: string | null = null;
  title = "";

  constructor(
    readonly workflows: ReadonlyMap<string, CompiledWorkflow>,
    readonly latest: number,
  ) {}

  /** The first problem of one event, or `null`. */
  event(e: RuleEvent): string | [string, string] | null {
    if (!isMember(EVENT_KINDS, e.kind)) return ["unknown_kind", "is of no known kind"];
    const time = isoTime(e.at);
    if (time === null) {
      return ["bad_time", `has a time that is no ISO-8601 UTC time (${JSON.stringify(e.at)})`];
    }
    if (time > this.latest) return ["bad_time", `is dated in the future (${e.at})`];
    const nested = nestingProblem(e.payload);
    if (nested) return ["too_deep", nested];
    const shaped = PAYLOADS[e.kind].safeParse(e.payload);
    if (!shaped.success) {
      const issue = shaped.error.issues[0]!;
      return ["bad_shape", `${issue.path.join(".") || "its payload"}: ${issue.message}`];
    }
    if (e.payload.kind !== e.kind) return ["bad_shape", "its payload is of another kind"];
    return this.meaning(e.kind, e.payload, e.n);
  }

  meaning(kind: string, p: Payload, n: number): string | [string, string] | null {
    if (kind === "session_created") return this.sessionCreated(p);
    if (this.sessionId === null) return "comes before the session was created";
    if (p.sessionId !== this.sessionId) return "belongs to another session";
    if (kind === "run_started") return this.runStarted(p);
    if (kind === "review_passed") {
      if (this.passes.has(String(p.reviewId))) return "passes its review a second time";
      this.passes.add(String(p.reviewId));
      return null;
    }
    const run = this.runs.get(String(p.runId));
    if (!run) return "names a run not started before it";
    switch (kind) {
      case "workflow_pinned":
        return null;
      case "node_created":
        return this.nodeCreated(run, p);
      case "edge_created":
        run.named.push({ n, nodeId: String(p.fromId), what: "its edge's source" });
        run.named.push({ n, nodeId: String(p.toId), what: "its edge's target" });
        return once(run, `edge:${p.toId}`, "gives a node a second incoming edge");
      case "output_recorded":
        return this.output(run, p, n);
      case "advance_recorded":
      case "checkpoint_recorded":
        run.named.push({ n, nodeId: String(p.resultNodeId), what: "its result node" });
        return this.atNode(run, p, n) ??
          once(run, `attempt:${p.nodeId}:${p.attemptId}:${kind}`, "records an attempt twice");
      case "run_stacked":
        return this.stacked(run, p, n);
      case "run_delegated":
        return this.delegated(run, p, n);
      default:
        return this.atNode(run, p, n);
    }
  }

  sessionCreated(p: Payload): string | [string, string] | null {
    if (this.sessionId !== null) return "creates the session a second time";
    this.sessionId = String(p.sessionId);
    this.title = String(p.title);
    return null;
  }

  runStarted(p: Payload): string | null {
    const runId = String(p.runId);
    if (this.runs.has(runId)) return "starts its run a second time";
    const workflow = this.workflows.get(String(p.workflowHash));
    if (workflow && workflow.id !== p.workflowId) {
      return `names workflow ${JSON.stringify(p.workflowId)} where its pinned snapshot is ${
        JSON.stringify(workflow.id)
      }`;
    }
    this.runs.set(runId, {
      workflow,
      steps: workflow && this.steps(workflow),
      nodes: new Map(),
      contexts: new Set(),
      unique: new Set(),
      named: [],
    });
    return null;
  }

  steps(workflow: CompiledWorkflow): Set<string> {
    const known = this.#steps.get(workflow);
    if (known) return known;
    const ids = stepIds(workflow);
    this.#steps.set(workflow, ids);
    return ids;
  }

  nodeCreated(run: RunFacts, p: Payload): string | null {
    const nodeId = String(p.nodeId);
    if (run.nodes.has(nodeId)) return "creates a node its run already has";
    const parent = p.parentId === null ? undefined : run.nodes.get(String(p.parentId));
    if (p.parentId !== null && parent === undefined) return "hangs from a node not created before";
    if (p.parentId === null && run.nodes.size > 0) return "gives its run a second root";
    if (p.depth !== (parent === undefined ? 0 : parent + 1)) return "has a depth its place denies";
    const context = this.context(run, p);
    if (context) return context;
    if (run.workflow) {
      const off = positionProblem(run.workflow, p.state);
      if (off) return `has a state that is no position in its workflow: ${off}`;
      if (p.pendingStepId !== null && !run.steps!.has(String(p.pendingStepId))) {
        return `is pending on step ${JSON.stringify(p.pendingStepId)}, which its workflow lacks`;
      }
    }
    run.nodes.set(nodeId, Number(p.depth));
    return null;
  }

  /** A node carries its context (with the id it hashes to) or names one its run logged. */
  context(run: RunFacts, p: Payload): string | null {
    const id = p.contextId as string | undefined;
    if (p.context === undefined) {
      return id !== undefined && run.contexts.has(id)
        ? null
        : "names a context its run never logged";
    }
    if (id === undefined) return null;
    if (sha256HexSync(JSON.stringify(p.context)) !== id) {
      return "carries a context that is not its id's";
    }
    run.contexts.add(id);
    return null;
  }

  output(run: RunFacts, p: Payload, n: number): string | [string, string] | null {
    const sized = checkOutput({
      notesMarkdown: (p.notesMarkdown as string | null) ?? undefined,
      artifacts: p.artifacts as unknown[],
    });
    if (!sized.ok) {
      const limit = sized.error.message.split(/\. /)[0]!.replace(
        / \(nothing was recorded\)\.?$/,
        "",
      );
      return [String(sized.error.details?.reason ?? "too_large"), `is over a cap: ${limit}`];
    }
    return this.atNode(run, p, n) ??
      once(run, `output:${p.nodeId}`, "records a node's output twice");
  }

  stacked(run: RunFacts, p: Payload, n: number): string | null {
    if (p.parentRunId !== null) {
      const parent = this.runs.get(String(p.parentRunId));
      if (!parent) return "stacks its run on a run this session has not started";
      parent.named.push({ n, nodeId: String(p.parentNodeId), what: "its parent node" });
    }
    return once(run, "stacked", "stacks its run a second time");
  }

  delegated(run: RunFacts, p: Payload, n: number): string | null {
    const parent = this.runs.get(String(p.parentRunId));
    if (!parent || parent === run) {
      return "delegates its run from a run this session has not started";
    }
    parent.named.push({ n, nodeId: String(p.parentNodeId), what: "its parent node" });
    return once(run, "delegated", "delegates its run a second time");
  }

  atNode(run: RunFacts, p: Payload, n: number): null {
    run.named.push({ n, nodeId: String(p.nodeId), what: "its node" });
    return null;
  }

  /** The session's own rules, once every event is read. */
  end(): RuleViolation | null {
    for (const run of this.runs.values()) {
      const missing = run.named.find((r) => !run.nodes.has(r.nodeId));
      if (missing) {
        return {
          n: missing.n,
          rule: "missing_node",
          message:
            `event ${missing.n} names ${missing.what} (${missing.nodeId}), which its run never created`,
        };
      }
    }
    const names = new Set([...this.workflows.values()].map((w) => w.name));
    if (this.title.length > LIMITS.titleChars && !names.has(this.title)) {
      return {
        n: 1,
        rule: "too_large",
        message: `its title is ${this.title.length} characters; the limit is ${LIMITS.titleChars}`,
      };
    }
    return null;
  }
}

/**
 * Why a payload is nested too deep (its context past the cap, or anything past what the caps
 * allow), or `null`. Counted without recursion: check this before anything recursive reads it.
 */
export function nestingProblem(payload: Record<string, unknown>): string | null {
  if (jsonDepth(payload.context) > LIMITS.depth) {
    return `has a context nested more than ${LIMITS.depth} levels deep (the limit)`;
  }
  return jsonDepth(payload, PAYLOAD_DEPTH) > PAYLOAD_DEPTH
    ? `has a payload nested more than ${PAYLOAD_DEPTH} levels deep (values are capped at ${LIMITS.depth})`
    : null;
}

/** Records a row the projections keep unique; a second one is the problem `twice`. */
function once(run: RunFacts, key: string, twice: string): string | null {
  if (run.unique.has(key)) return twice;
  run.unique.add(key);
  return null;
}

/**
 * The first rule a session's events break, or `null` when they satisfy every rule a session
 * built over MCP satisfies. `workflows` are the compiled snapshots by `workflowHash` (a run
 * whose snapshot is absent is checked for everything but its positions); `now` bounds times.
 */
export function sessionRuleViolation(
  events: Iterable<RuleEvent>,
  workflows: ReadonlyMap<string, CompiledWorkflow>,
  options: { now: string },
): RuleViolation | null {
  const rules = new Rules(workflows, Date.parse(options.now) + CLOCK_SKEW_MS);
  let first = true;
  for (const e of events) {
    if (first && e.kind !== "session_created") {
      return { n: e.n, rule: "bad_order", message: `event ${e.n} comes before session_created` };
    }
    first = false;
    const problem = rules.event(e);
    if (problem === null) continue;
    const [rule, what] = typeof problem === "string" ? ["bad_reference", problem] : problem;
    return { n: e.n, rule, message: `event ${e.n} (${e.kind}) ${what}` };
  }
  return rules.end();
}
