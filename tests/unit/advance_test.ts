/**
 * The pure half of an acknowledgement (engine/run/advance.ts): its review, the events of
 * a blocked and of an advanced outcome, and the progress it reports, without a store.
 */
import assert from "node:assert/strict";
import {
  advancedEvents,
  assessAck,
  blockedEvents,
  gapsOf,
  stepProgress,
} from "../../engine/run/advance.ts";
import { childNode } from "../../engine/run/node_events.ts";
import type { NodeRecord } from "../../engine/model/ports.ts";
import { DEFAULT_PREFERENCES } from "../../engine/model/preferences.ts";
import type { StepResponse } from "../../engine/answers/responses.ts";
import { SESSION_NOTES_WORKFLOW } from "../../engine/run/session_notes.ts";
import type { CompiledWorkflow } from "../../engine/workflow/compiled.ts";

const COMPILED: CompiledWorkflow = {
  ...SESSION_NOTES_WORKFLOW,
  id: "user.two",
  steps: [
    {
      kind: "step",
      id: "a",
      title: "Step A",
      promptTemplate: "A",
      requireConfirmation: false,
      outputContract: {
        contractRef: "wr.contracts.review_verdict",
        required: true,
        artifactKind: "wr.review_verdict",
      },
    },
    { kind: "step", id: "b", title: "Step B", promptTemplate: "B", requireConfirmation: false },
  ],
};

const ROOT: NodeRecord = {
  sessionId: "1111111111111111",
  runId: "2222222222222222",
  nodeId: "3333333333333333",
  parentId: null,
  nodeKind: "step",
  depth: 0,
  state: { v: 2, pc: 0, frames: [] },
  context: {},
  preferences: DEFAULT_PREFERENCES,
  pendingStepId: "a",
  edgeKind: null,
  notesMarkdown: null,
  notesStepId: null,
  stepCount: 1,
};

const RESPONSE = { kind: "ok" } as StepResponse;

Deno.test("an acknowledgement missing its required artifact blocks, and records only the attempt", async () => {
  const a = assessAck(ROOT, {
    compiled: COMPILED,
    ack: { output: { notesMarkdown: "x" } },
    warnings: [],
  });
  assert.equal(a.blocks, true);
  assert.deepEqual(a.problems.map((p) => p.code), ["MISSING_REQUIRED_OUTPUT"]);
  const created = await childNode(ROOT, {
    origin: ["blocked", ROOT.runId, ROOT.nodeId, "aaaaaaaaaaaa"],
    nodeKind: "blocked_attempt",
    state: ROOT.state,
    context: a.context,
    preferences: a.preferences,
    pendingStepId: "a",
    edgeKind: null,
    notesMarkdown: "x",
    notesStepId: "a",
  });
  const events = blockedEvents(a, {
    node: ROOT,
    created,
    attemptId: "aaaaaaaaaaaa",
    response: RESPONSE,
  });
  assert.deepEqual(events.map((e) => e.kind), [
    "node_created",
    "output_recorded",
    "advance_recorded",
  ]);
  assert.ok(!("stepCount" in events[0]!));
});

Deno.test("under never-stop the same problems advance as critical gaps, with progress", async () => {
  const node = {
    ...ROOT,
    preferences: { ...ROOT.preferences, autonomy: "full_auto_never_stop" as const },
  };
  const a = assessAck(node, { compiled: COMPILED, ack: {}, warnings: [] });
  assert.equal(a.blocks, false);
  const gaps = gapsOf(a);
  assert.deepEqual(gaps.map((g) => [g.severity, g.code]), [[
    "critical",
    "MISSING_REQUIRED_OUTPUT",
  ]]);
  const created = await childNode(node, {
    origin: ["ack", node.runId, node.nodeId, "bbbbbbbbbbbb"],
    nodeKind: "step",
    state: { v: 2, pc: 1, frames: [] },
    context: a.context,
    preferences: a.preferences,
    pendingStepId: "b",
    edgeKind: "acked_step",
    notesMarkdown: null,
    notesStepId: "a",
  });
  assert.equal(created.stepCount, 2);
  const events = advancedEvents(a, {
    node,
    created,
    attemptId: "bbbbbbbbbbbb",
    response: RESPONSE,
    gaps,
    run: {
      runId: node.runId,
      sessionId: node.sessionId,
      workflowId: COMPILED.id,
      workflowHash: "sha256:x",
      corrupt: false,
      status: "running",
      observed: null,
      owner: null,
      access: null,
    },
  });
  assert.deepEqual(events.map((e) => e.kind), [
    "node_created",
    "edge_created",
    "gap_recorded",
    "advance_recorded",
  ]);
  assert.deepEqual(stepProgress(COMPILED, { child: created, completed: a.step }), {
    done: 1,
    total: 2,
    stepTitle: "Step A",
  });
});
