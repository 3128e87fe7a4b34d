/**
 * WorkRail's gates, rule by rule, through the engine's use-cases on a libSQL `:memory:` store:
 * required notes, assessments (missing, unknown, out-of-range levels, optional dimensions),
 * follow-ups (one at a time, several at once, scoped with `forAssessment`), required context
 * keys, never-stop turning each block into a gap, and recorded assessments read by a later
 * runCondition.
 */
import assert from "node:assert/strict";
import type { EngineDeps } from "../../engine/model/ports.ts";
import type { StepResponse } from "../../engine/answers/responses.ts";
import { renderStepResponse } from "../../engine/answers/text.ts";
import { continueWorkflow } from "../../engine/use_cases/continue_workflow.ts";
import { startWorkflow } from "../../engine/use_cases/start_workflow.ts";
import type { Autonomy } from "../../engine/model/vocabulary.ts";
import {
  loadWorkflowFile,
  loadWorkflowFiles,
  resolveCatalog,
} from "../../engine/workflow/catalog.ts";
import { memoryDeps } from "../helpers/memory.ts";
import { placeOf } from "../helpers/answers.ts";

const READINESS = {
  id: "readiness",
  purpose: "Whether the work is ready.",
  dimensions: [
    { id: "evidence", purpose: "Backed by runs.", levels: ["gaps", "complete"] },
    { id: "confidence", purpose: "How sure.", levels: ["low", "medium", "high"] },
    { id: "style", purpose: "Optional polish.", levels: ["rough", "clean"], required: false },
  ],
};
const RISK = {
  id: "risk",
  purpose: "What could go wrong.",
  dimensions: [{
    id: "containment",
    purpose: "How contained a failure is.",
    levels: ["low", "high"],
  }],
};

const GATES = {
  id: "user.gates",
  name: "Gates",
  description: "One step per gate.",
  version: "1.0.0",
  assessments: [READINESS, RISK],
  steps: [
    { id: "plain", title: "Plain", prompt: "Do it." },
    { id: "quiet", title: "Quiet", prompt: "Mechanical.", notesOptional: true },
    {
      id: "verdict",
      title: "Verdict",
      prompt: "Judge.",
      outputContract: { contractRef: "wr.contracts.gate_verdict" },
    },
    {
      id: "gate",
      title: "Gate",
      prompt: "Rate the work.",
      assessmentRefs: ["readiness", "risk"],
      assessmentConsequences: [
        {
          when: { anyEqualsLevel: "gaps" },
          effect: { kind: "require_followup", guidance: "Fill gaps." },
        },
        {
          when: { anyEqualsLevel: "low", forAssessment: "risk" },
          effect: { kind: "require_followup", guidance: "Contain it." },
        },
      ],
    },
    {
      id: "careful",
      title: "Careful",
      prompt: "Extra checks for {{ticket}}.",
      runCondition: { var: "assessments.readiness.confidence", equals: "medium" },
    },
    {
      id: "ticketed",
      title: "Ticketed",
      prompt: "File {{ticket}} under {{repo.path}}.",
      requiredContext: ["ticket", "repo.path"],
    },
    { id: "end", title: "End", prompt: "Finish." },
  ],
};

async function setup(): Promise<EngineDeps> {
  const [loaded] = await loadWorkflowFiles([
    { source: "user", file: "gates.json", text: JSON.stringify(GATES) },
  ]);
  if (!loaded!.ok) throw new Error(JSON.stringify(loaded!.error));
  const set = resolveCatalog([loaded!.workflow], []);
  return { ...(await memoryDeps()).deps, workflows: { load: () => Promise.resolve(set) } };
}

type Ack = Omit<Parameters<typeof continueWorkflow>[1], "stateToken" | "ackToken">;

async function ack(deps: EngineDeps, from: StepResponse, extra: Ack = {}): Promise<StepResponse> {
  const result = await continueWorkflow(deps, {
    stateToken: from.stateToken,
    ackToken: from.ackToken!,
    ...extra,
  });
  if (!result.ok) throw new Error(JSON.stringify(result.error));
  return result.value;
}

const notes = (text = "Done.") => ({ notesMarkdown: text });
const rate = (assessmentId: string, dimensions: Record<string, unknown>) => ({
  kind: "wr.assessment",
  assessmentId,
  dimensions,
});
const PASSING = [
  rate("readiness", { evidence: "complete", confidence: "high" }),
  rate("risk", { containment: "high" }),
];
const VERDICT = {
  kind: "wr.gate_verdict",
  verdict: "approved",
  confidence: "high",
  rationale: "Every criterion is met, with evidence cited.",
};

/** What each step needs to pass. */
const PASS: Record<string, Ack> = {
  plain: { output: notes() },
  quiet: {},
  verdict: { output: { artifacts: [VERDICT] } as never },
  gate: { output: { ...notes(), artifacts: PASSING } as never },
  careful: { output: notes() },
  ticketed: { context: { ticket: "T-1", repo: { path: "/r" } }, output: notes() },
};

async function walkTo(
  deps: EngineDeps,
  stepId: string,
  autonomy: Autonomy = "guided",
): Promise<StepResponse> {
  const started = await startWorkflow(deps, {
    workflowId: "user.gates",
    preferences: { autonomy },
  });
  assert.ok(started.ok, JSON.stringify(!started.ok && started.error));
  let r = started.value;
  while (r.pending!.stepId !== stepId) {
    r = await ack(deps, r, PASS[r.pending!.stepId]!);
    assert.equal(r.kind, "ok", JSON.stringify(r.blockers));
  }
  return r;
}

/** Fresh tokens for the same node (an ack token is spent by its first attempt). */
async function rehydrate(deps: EngineDeps, from: StepResponse): Promise<StepResponse> {
  const result = await continueWorkflow(deps, { stateToken: from.stateToken });
  if (!result.ok) throw new Error(JSON.stringify(result.error));
  return result.value;
}

const codes = (r: StepResponse) => r.blockers?.map((b) => [b.code, b.pointer]);

Deno.test("notes: required on a plain step, blank counts as none; optional when marked or under a contract", async () => {
  const deps = await setup();
  const plain = await walkTo(deps, "plain");
  assert.equal(plain.pending!.notesOptional, undefined);
  assert.match(renderStepResponse(plain), /output\.notesMarkdown:/, "no (optional): required");
  let from = plain;
  for (const sent of [{}, { output: notes("  \n ") }]) {
    const blocked = await ack(deps, from, sent);
    from = blocked;
    assert.equal(blocked.kind, "blocked");
    assert.deepEqual(codes(blocked), [[
      "MISSING_REQUIRED_NOTES",
      { kind: "workflow_step", stepId: "plain" },
    ]]);
    assert.ok(blocked.blockers![0]!.suggestedFix);
    assert.equal(typeof blocked.example!.output!.notesMarkdown, "string");
    assert.equal(blocked.pending!.stepId, "plain");
  }
  const quiet = await ack(deps, from, PASS.plain);
  assert.equal(quiet.pending!.notesOptional, true);
  assert.match(renderStepResponse(quiet), /output\.notesMarkdown \(optional\)/);
  const verdict = await ack(deps, quiet);
  assert.equal(verdict.kind, "ok", "notesOptional: no notes needed");
  assert.equal(verdict.pending!.notesOptional, true, "a contract step never requires notes");
  const after = await ack(deps, verdict, PASS.verdict);
  assert.equal(after.kind, "ok");
  assert.equal(after.pending!.stepId, "gate");
});

Deno.test("notes on a step with validation criteria: one blocker, MISSING_REQUIRED_NOTES", async () => {
  const [loaded] = await loadWorkflowFiles([{
    source: "user",
    file: "v.json",
    text: JSON.stringify({
      id: "user.v",
      name: "V",
      description: "d",
      version: "1",
      steps: [
        {
          id: "w",
          title: "W",
          prompt: "Write.",
          validationCriteria: [{ type: "contains", value: "OK" }],
        },
        { id: "e", title: "E", prompt: "End." },
      ],
    }),
  }]);
  assert.ok(loaded!.ok);
  const set = resolveCatalog([loaded!.workflow], []);
  const deps = { ...(await memoryDeps()).deps, workflows: { load: () => Promise.resolve(set) } };
  const started = await startWorkflow(deps, { workflowId: "user.v" });
  assert.ok(started.ok);
  const blocked = await ack(deps, started.value);
  assert.deepEqual(blocked.blockers!.map((b) => b.code), ["MISSING_REQUIRED_NOTES"]);
});

Deno.test("assessments: missing, unknown, out-of-range and incomplete ratings block with the valid values", async () => {
  const deps = await setup();
  const at = await walkTo(deps, "gate");
  assert.deepEqual(at.pending!.assessments!.map((a) => a.assessmentId), ["readiness", "risk"]);
  const cases: { send: unknown[]; want: [string, unknown, RegExp][] }[] = [
    {
      send: [],
      want: [
        ["MISSING_REQUIRED_OUTPUT", {
          kind: "output_contract",
          contractRef: "wr.contracts.assessment",
        }, /requires the assessment `readiness`/],
        ["MISSING_REQUIRED_OUTPUT", {
          kind: "output_contract",
          contractRef: "wr.contracts.assessment",
        }, /requires the assessment `risk`/],
      ],
    },
    {
      send: [...PASSING, rate("nope", { evidence: "complete" })],
      want: [[
        "INVALID_REQUIRED_OUTPUT",
        { kind: "output_contract", contractRef: "wr.contracts.assessment" },
        /names `nope`.*asks for: `readiness`, `risk`/,
      ]],
    },
    {
      send: [
        rate("readiness", { evidence: "complete", confidence: "high", speed: "fast" }),
        PASSING[1],
      ],
      want: [[
        "INVALID_REQUIRED_OUTPUT",
        { kind: "assessment_dimension", assessmentId: "readiness", dimensionId: "speed" },
        /no dimension `speed`; its dimensions: `evidence`, `confidence`, `style`/,
      ]],
    },
    {
      send: [rate("readiness", { evidence: "complete" }), PASSING[1]],
      want: [[
        "MISSING_REQUIRED_OUTPUT",
        { kind: "assessment_dimension", assessmentId: "readiness", dimensionId: "confidence" },
        /needs a level for `confidence`: one of `low`, `medium`, `high`/,
      ]],
    },
    {
      send: [rate("readiness", { evidence: "complete", confidence: "sure" }), PASSING[1]],
      want: [[
        "INVALID_REQUIRED_OUTPUT",
        { kind: "assessment_dimension", assessmentId: "readiness", dimensionId: "confidence" },
        /`sure` is not a level of `readiness`\.`confidence`; its levels: `low`, `medium`, `high`/,
      ]],
    },
    {
      send: [{ kind: "wr.assessment", dimensions: { containment: "high" } }, PASSING[0]],
      want: [
        ["INVALID_REQUIRED_OUTPUT", {
          kind: "output_contract",
          contractRef: "wr.contracts.assessment",
        }, /needs `assessmentId`/],
        ["MISSING_REQUIRED_OUTPUT", {
          kind: "output_contract",
          contractRef: "wr.contracts.assessment",
        }, /requires the assessment `risk`/],
      ],
    },
  ];
  let from = at;
  for (const c of cases) {
    const blocked = await ack(deps, from, { output: { ...notes(), artifacts: c.send } as never });
    from = blocked;
    assert.equal(blocked.kind, "blocked", JSON.stringify(c.send));
    assert.deepEqual(codes(blocked), c.want.map(([code, pointer]) => [code, pointer]));
    c.want.forEach(([, , message], i) => assert.match(blocked.blockers![i]!.message, message));
    assert.ok(
      blocked.example!.output!.artifacts!.some((a) =>
        (a as { kind: string }).kind === "wr.assessment"
      ),
      "the example carries assessment artifacts",
    );
  }
  // An optional dimension may be left out; `{level, rationale}` is accepted too.
  const passed = await ack(deps, from, {
    output: {
      ...notes(),
      artifacts: [
        rate("readiness", {
          evidence: { level: "complete", rationale: "ran it" },
          confidence: "high",
        }),
        PASSING[1],
      ],
    } as never,
  });
  assert.equal(passed.kind, "ok", JSON.stringify(passed.blockers));
});

Deno.test("follow-ups: each fires on its own, several at once, forAssessment scopes one; a passing retry advances", async () => {
  const deps = await setup();
  const at = await walkTo(deps, "gate");
  const send = (readiness: Record<string, string>, containment: string) => ({
    output: {
      ...notes(),
      artifacts: [rate("readiness", readiness), rate("risk", { containment })],
    } as never,
  });
  const one = await ack(deps, at, send({ evidence: "gaps", confidence: "high" }, "high"));
  assert.equal(one.kind, "blocked");
  assert.deepEqual(one.blockers, [{
    code: "ASSESSMENT_FOLLOWUP_REQUIRED",
    pointer: { kind: "assessment_dimension", assessmentId: "readiness", dimensionId: "evidence" },
    message:
      "Follow-up required: readiness.evidence = `gaps`. The step stays pending: do what the suggested fix says, then acknowledge again with a new assessment.",
    suggestedFix: "Fill gaps.",
  }]);
  assert.equal(one.pending!.stepId, "gate");
  assert.match(renderStepResponse(one), /ASSESSMENT_FOLLOWUP_REQUIRED/);

  const both = await ack(deps, one, send({ evidence: "gaps", confidence: "high" }, "low"));
  assert.deepEqual(both.blockers!.map((b) => [b.suggestedFix, b.pointer]), [
    ["Fill gaps.", {
      kind: "assessment_dimension",
      assessmentId: "readiness",
      dimensionId: "evidence",
    }],
    ["Contain it.", {
      kind: "assessment_dimension",
      assessmentId: "risk",
      dimensionId: "containment",
    }],
  ]);

  // `low` on readiness is not `low` on risk: the scoped consequence stays quiet.
  const scoped = await ack(deps, both, send({ evidence: "complete", confidence: "low" }, "high"));
  assert.equal(scoped.kind, "ok", JSON.stringify(scoped.blockers));
  assert.notEqual(scoped.pending!.stepId, "gate");
  assert.equal(scoped.forked, undefined, "blocked attempts are not branches");
});

Deno.test("recorded assessments are read by a later runCondition as assessments.<id>.<dimension>", async () => {
  const deps = await setup();
  const at = await walkTo(deps, "gate");
  const high = await ack(deps, at, PASS.gate);
  assert.equal(high.pending!.stepId, "ticketed", "confidence high: `careful` is skipped");
  const medium = await ack(deps, await rehydrate(deps, at), {
    output: {
      ...notes(),
      artifacts: [rate("readiness", { evidence: "complete", confidence: "medium" }), PASSING[1]],
    } as never,
  });
  assert.ok(medium.forked, "a second acknowledgement of the same node forks");
  assert.equal(medium.pending!.stepId, "careful", "confidence medium: `careful` runs");
  assert.equal(medium.pending!.prompt, "Extra checks for (not provided: ticket).");
  // The levels travel with the branch: the next node still sees them.
  const state = await deps.store.getNode(
    placeOf(medium).runId.replace(/^run_/, ""),
    placeOf(medium).nodeId,
  );
  assert.deepEqual((state!.state as { assessments?: unknown }).assessments, {
    readiness: { evidence: "complete", confidence: "medium" },
    risk: { containment: "high" },
  });
});

Deno.test("required context: a missing key blocks with MISSING_CONTEXT_KEY; nested keys and the node's context count", async () => {
  const deps = await setup();
  const at = await walkTo(deps, "ticketed");
  assert.match(at.pending!.prompt, /## Context to set[\s\S]*- `ticket`\n- `repo\.path`/);
  const blocked = await ack(deps, at, { context: { repo: {} }, output: notes() });
  assert.deepEqual(codes(blocked), [
    ["MISSING_CONTEXT_KEY", { kind: "context_key", key: "repo.path" }],
    ["MISSING_CONTEXT_KEY", { kind: "context_key", key: "ticket" }],
  ]);
  assert.deepEqual(blocked.example!.context, { "repo.path": "<value>", ticket: "<value>" });
  const half = await ack(deps, blocked, { context: { ticket: "T-9" }, output: notes() });
  assert.deepEqual(codes(half), [["MISSING_CONTEXT_KEY", {
    kind: "context_key",
    key: "repo.path",
  }]]);
  const done = await ack(deps, half, {
    context: { ticket: "T-9", repo: { path: "/r" } },
    output: notes(),
  });
  assert.equal(done.kind, "ok");
  assert.equal(done.pending!.stepId, "end");
});

Deno.test("full_auto_never_stop: notes, assessment, follow-up and context-key problems become critical gaps", async () => {
  const deps = await setup();
  const plain = await walkTo(deps, "plain", "full_auto_never_stop");
  const noNotes = await ack(deps, plain);
  assert.equal(noNotes.kind, "ok");
  assert.deepEqual(noNotes.gaps!.map((g) => [g.severity, g.code]), [[
    "critical",
    "MISSING_REQUIRED_NOTES",
  ]]);

  const gate = await walkTo(deps, "gate", "full_auto_never_stop");
  const followUp = await ack(deps, gate, {
    output: {
      ...notes(),
      artifacts: [rate("readiness", { evidence: "gaps", confidence: "medium" }), PASSING[1]],
    } as never,
  });
  assert.equal(followUp.kind, "ok");
  assert.deepEqual(followUp.gaps!.map((g) => [g.code, g.pointer]), [[
    "ASSESSMENT_FOLLOWUP_REQUIRED",
    { kind: "assessment_dimension", assessmentId: "readiness", dimensionId: "evidence" },
  ]]);
  assert.equal(followUp.pending!.stepId, "careful", "the recorded levels still steer the run");

  const missing = await ack(deps, await rehydrate(deps, gate), { output: notes() });
  assert.deepEqual(missing.gaps!.map((g) => g.code), [
    "MISSING_REQUIRED_OUTPUT",
    "MISSING_REQUIRED_OUTPUT",
  ]);
  const ticketed = await walkTo(deps, "ticketed", "full_auto_never_stop");
  const noKey = await ack(deps, ticketed, { output: notes() });
  assert.equal(noKey.kind, "ok");
  assert.deepEqual(noKey.gaps!.map((g) => g.code), ["MISSING_CONTEXT_KEY", "MISSING_CONTEXT_KEY"]);
});

Deno.test("compile errors: a required context key nothing reads, gate fields on a loop step", async () => {
  const base = { id: "user.bad", name: "Bad", description: "d", version: "1" };
  const unread = await loadWorkflowFile({
    source: "user",
    file: "bad.json",
    text: JSON.stringify({
      ...base,
      steps: [{ id: "a", title: "A", prompt: "Use {{tiket}}.", requiredContext: ["ticket"] }],
    }),
  });
  assert.equal(unread.ok, false);
  assert.match(
    JSON.stringify(!unread.ok && unread.error.issues),
    /requires context `ticket`, which no \{\{placeholder\}\} or condition of this workflow reads/,
  );
  const loop = await loadWorkflowFile({
    source: "user",
    file: "bad.json",
    text: JSON.stringify({
      ...base,
      steps: [{
        id: "l",
        title: "L",
        type: "loop",
        loop: { type: "for", count: 2, maxIterations: 2 },
        body: [{ id: "b", title: "B", prompt: "{{x}}" }],
        requiredContext: ["x"],
      }],
    }),
  });
  assert.equal(loop.ok, false);
  assert.match(
    JSON.stringify(!loop.ok && loop.error.issues),
    /a loop step has no `requiredContext`/,
  );
});
