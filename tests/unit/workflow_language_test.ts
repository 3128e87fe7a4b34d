/**
 * The workflow language: loops (while, until, for, forEach, nested, body by id, artifact-driven,
 * maxIterations), conditions, prompt composition (snippet refs, fragments, features, roles,
 * placeholders), templates and routines, compile errors that list what is known, old run states,
 * and hash stability.
 */
import assert from "node:assert/strict";
import {
  loadWorkflowFile,
  loadWorkflowFiles,
  type SourceFile,
} from "../../engine/workflow/catalog.ts";
import {
  type CompiledStep,
  type CompiledWorkflow,
  normalizeCompiled,
} from "../../engine/workflow/compiled.ts";
import { advanceState, initialState, type RunState } from "../../engine/workflow/interpreter.ts";
import { pendingStep } from "../../engine/workflow/pending.ts";
import { parseWorkflowText } from "../../engine/workflow/parse.ts";

function wf(steps: unknown[], extra: Record<string, unknown> = {}): string {
  return JSON.stringify({
    id: "user.t",
    name: "T",
    description: "d",
    version: "1",
    ...extra,
    steps,
  });
}

async function compile(text: string, files: SourceFile[] = []): Promise<CompiledWorkflow> {
  const results = await loadWorkflowFiles([{ source: "user", file: "t.json", text }, ...files]);
  const first = results[0]!;
  if (!first.ok) throw new Error(JSON.stringify(first.error.issues));
  return first.workflow.compiled;
}

async function issues(text: string): Promise<string[]> {
  const loaded = await loadWorkflowFile({ source: "user", file: "t.json", text });
  assert.equal(loaded.ok, false, "expected a load error");
  return loaded.ok ? [] : loaded.error.issues.map((i) => `${i.path}: ${i.message}`);
}

/** Walks a run: `answer` gives the context patch and artifacts for each pending step. */
function walk(
  compiled: CompiledWorkflow,
  context: Record<string, unknown>,
  answer: (
    stepId: string,
    n: number,
  ) => { context?: Record<string, unknown>; artifacts?: Record<string, unknown>[] } = () => ({}),
): { trail: string[]; prompts: string[]; notices: string[] } {
  let ctx = { ...context };
  let state = initialState(compiled, ctx);
  const trail: string[] = [];
  const prompts: string[] = [];
  const notices: string[] = [];
  for (let i = 0; i < 200; i++) {
    const pending = pendingStep(compiled, state, ctx);
    if (!pending) break;
    trail.push(pending.stepId);
    prompts.push(pending.prompt);
    const a = answer(pending.stepId, trail.filter((t) => t === pending.stepId).length);
    ctx = { ...ctx, ...(a.context ?? {}) };
    const next = advanceState(compiled, state, { context: ctx, artifacts: a.artifacts });
    notices.push(...next.notices.map((n) => n.code));
    state = next.state;
  }
  return { trail, prompts, notices };
}

Deno.test("forEach exposes itemVar, indexVar and the iteration counter to prompts and conditions", async () => {
  const compiled = await compile(wf([
    { id: "load", title: "Load", prompt: "Load items" },
    {
      id: "each",
      type: "loop",
      title: "Each",
      loop: { type: "forEach", items: "items", itemVar: "item", indexVar: "i", maxIterations: 10 },
      body: [
        {
          id: "do",
          title: "Do",
          prompt: "Do {{item.name}} #{{i}} (iteration {{currentIteration}})",
        },
        {
          id: "second-only",
          title: "Second",
          prompt: "Only on the second",
          runCondition: { var: "i", equals: 1 },
        },
      ],
    },
    { id: "end", title: "End", prompt: "{{items.length}} done" },
  ]));
  const { trail, prompts } = walk(compiled, { items: [{ name: "a" }, { name: "b" }] });
  assert.deepEqual(trail, ["load", "do", "do", "second-only", "end"]);
  assert.equal(prompts[1], "Do a #0 (iteration 1)");
  assert.equal(prompts[2], "Do b #1 (iteration 2)");
  assert.equal(prompts[4], "2 done");
  assert.deepEqual(walk(compiled, { items: [] }).trail, ["load", "end"]);
});

Deno.test("while and until loops read context; for counts from a number or a variable", async () => {
  const compiled = await compile(wf([
    {
      id: "w",
      type: "loop",
      title: "W",
      loop: { type: "while", condition: { var: "more", equals: true }, maxIterations: 5 },
      body: [{ id: "w-body", title: "WB", prompt: "w" }],
    },
    {
      id: "u",
      type: "loop",
      title: "U",
      loop: { type: "until", condition: { var: "done", equals: true }, maxIterations: 5 },
      body: [{ id: "u-body", title: "UB", prompt: "u" }],
    },
    {
      id: "f",
      type: "loop",
      title: "F",
      loop: { type: "for", count: "times", maxIterations: 5, iterationVar: "n" },
      body: [{ id: "f-body", title: "FB", prompt: "f{{n}}" }],
    },
  ]));
  const { trail, prompts } = walk(compiled, { more: true, times: 3 }, (id, n) => {
    if (id === "w-body") return { context: { more: n < 2 } };
    if (id === "u-body") return { context: { done: n >= 3 } };
    return {};
  });
  assert.deepEqual(trail, [
    "w-body",
    "w-body",
    "u-body",
    "u-body",
    "u-body",
    "f-body",
    "f-body",
    "f-body",
  ]);
  assert.deepEqual(prompts.slice(5), ["f1", "f2", "f3"]);
});

Deno.test("maxIterations caps a loop and says so; it is required and at most 1000", async () => {
  const compiled = await compile(wf([{
    id: "w",
    type: "loop",
    title: "W",
    loop: { type: "while", condition: { var: "x", equals: 1 }, maxIterations: 3 },
    body: [{ id: "b", title: "B", prompt: "b" }],
  }]));
  const { trail, notices } = walk(compiled, { x: 1 });
  assert.deepEqual(trail, ["b", "b", "b"]);
  assert.deepEqual(notices, ["LOOP_MAX_ITERATIONS"]);
  const loopStep = (loop: Record<string, unknown>) =>
    wf([{ id: "w", type: "loop", title: "W", loop, body: [{ id: "b", title: "B", prompt: "b" }] }]);
  assert.ok(
    (await issues(loopStep({ type: "for", count: 2 }))).some((i) =>
      i.startsWith("steps[0].loop.maxIterations")
    ),
  );
  assert.ok(
    (await issues(loopStep({ type: "for", count: 2, maxIterations: 5000 }))).some((i) =>
      i.includes("maxIterations")
    ),
  );
  assert.ok(
    (await issues(loopStep({ type: "while", maxIterations: 2 }))).some((i) =>
      i.includes("needs `condition` or `conditionSource`")
    ),
  );
});

Deno.test("nested loops, a body given by step id, and an artifact-driven loop", async () => {
  const compiled = await compile(wf([
    {
      id: "outer",
      type: "loop",
      title: "Outer",
      loop: {
        type: "while",
        conditionSource: {
          kind: "artifact_contract",
          contractRef: "wr.contracts.loop_control",
          loopId: "outer_loop",
        },
        maxIterations: 4,
      },
      body: [
        {
          id: "inner",
          type: "loop",
          title: "Inner",
          loop: { type: "for", count: 2, maxIterations: 2, indexVar: "j" },
          body: "cell",
        },
        {
          id: "decide",
          title: "Decide",
          prompt: "continue or stop",
          outputContract: { contractRef: "wr.contracts.loop_control" },
        },
      ],
    },
    { id: "cell", title: "Cell", prompt: "outer {{currentIteration}} cell {{j}}" },
    { id: "after", title: "After", prompt: "after" },
  ]));
  const { trail, prompts } = walk(compiled, {}, (id, n) =>
    id === "decide"
      ? {
        artifacts: [{
          kind: "wr.loop_control",
          decision: n < 2 ? "continue" : "stop",
          loopId: "outer_loop",
        }],
      }
      : {});
  assert.deepEqual(trail, ["cell", "cell", "decide", "cell", "cell", "decide", "after"]);
  assert.equal(prompts[0], "outer 1 cell 0");
  assert.equal(prompts[4], "outer 2 cell 1", "the inner loop's counter wins over the outer's");
  // Without a decision an artifact-driven loop stops after one iteration.
  assert.deepEqual(walk(compiled, {}).trail, ["cell", "cell", "decide", "after"]);
});

Deno.test("run states are small, history-independent, and v1 states still read", async () => {
  const compiled = await compile(wf([
    { id: "a", title: "A", prompt: "a" },
    { id: "b", title: "B", prompt: "b" },
  ]));
  const v1 = { v: 1, pc: 1 } as unknown as RunState;
  assert.equal(pendingStep(compiled, v1, {})!.stepId, "b");
  assert.deepEqual(advanceState(compiled, v1, { context: {} }).state, { v: 2, pc: 2, frames: [] });
  const loop = await compile(wf([{
    id: "l",
    type: "loop",
    title: "L",
    loop: { type: "for", count: 900, maxIterations: 1000 },
    body: [{ id: "b", title: "B", prompt: "b" }],
  }]));
  let state = initialState(loop, {});
  for (let i = 0; i < 500; i++) state = advanceState(loop, state, { context: {} }).state;
  assert.deepEqual(state, { v: 2, pc: 0, frames: [{ at: 0, it: 501 }] });
});

Deno.test("conditions: the full operator set, and malformed conditions fail at load time", async () => {
  const compiled = await compile(wf([
    { id: "eq", title: "t", prompt: "p", runCondition: { var: "a", equals: "x" } },
    { id: "ne", title: "t", prompt: "p", runCondition: { var: "a", not_equals: "x" } },
    { id: "gt", title: "t", prompt: "p", runCondition: { var: "n", gt: 1 } },
    { id: "gte", title: "t", prompt: "p", runCondition: { var: "n", gte: 2 } },
    { id: "lt", title: "t", prompt: "p", runCondition: { var: "n", lt: 3 } },
    { id: "lte", title: "t", prompt: "p", runCondition: { var: "n", lte: 1 } },
    { id: "in", title: "t", prompt: "p", runCondition: { var: "a", in: ["y", "x"] } },
    { id: "has", title: "t", prompt: "p", runCondition: { var: "tags", contains: "go" } },
    {
      id: "all",
      title: "t",
      prompt: "p",
      runCondition: { and: [{ var: "n", gt: 1 }, { not: { var: "a", equals: "z" } }] },
    },
    {
      id: "any",
      title: "t",
      prompt: "p",
      runCondition: { or: [{ var: "deep.flag", equals: true }, { var: "n", equals: 99 }] },
    },
  ]));
  const { trail } = walk(compiled, { a: "x", n: 2, tags: ["go"], deep: { flag: true } });
  assert.deepEqual(trail, ["eq", "gt", "gte", "lt", "in", "has", "all", "any"]);
  for (
    const bad of [
      { var: "n", gt: "one" },
      { var: "n" },
      { var: "n", equals: 1, gt: 0 },
      { and: [] },
      { xor: [] },
      { var: "n", in: "x" },
    ]
  ) {
    const found = await issues(wf([{ id: "s", title: "t", prompt: "p", runCondition: bad }]));
    assert.ok(
      found.some((i) => i.startsWith("steps[0].runCondition")),
      JSON.stringify({ bad, found }),
    );
  }
});

Deno.test("prompt composition: snippet refs, fragments, features, roles and placeholders, deterministic", async () => {
  const compiled = await compile(
    wf([{
      id: "s",
      title: "S",
      agentRole: "You are the step's own role.",
      promptBlocks: {
        goal: "Reach {{target.name}}.",
        constraints: [[{ kind: "ref", refId: "wr.refs.notes_first_durability" }], "Be brief."],
        procedure: ["One", [{ kind: "text", text: "Two and " }, {
          kind: "ref",
          refId: "wr.refs.adversarial_challenge_rules",
        }]],
        outputRequired: { notesMarkdown: "What happened." },
        verify: ["Checked."],
      },
      promptFragments: [
        { id: "big", when: { var: "size", equals: "big" }, text: "Big extra for {{target.name}}." },
        { id: "always", text: "Always appended." },
      ],
    }, { id: "t", title: "T", prompt: "Plain" }], {
      agentRole: "You are the workflow's role.",
      features: ["wr.features.subagent_guidance"],
      metaGuidance: ["Own guidance."],
    }),
  );
  const small = pendingStep(compiled, initialState(compiled, {}), { target: { name: "X" } })!;
  const big = pendingStep(compiled, initialState(compiled, {}), {
    target: { name: "X" },
    size: "big",
  })!;
  assert.equal(small.agentRole, "You are the step's own role.");
  assert.match(small.prompt, /^## Goal\nReach X\.\n\n## Constraints\n- Write what matters/);
  assert.match(small.prompt, /\n2\. Two and Challenge the current conclusion/);
  assert.match(small.prompt, /- `notesMarkdown`: What happened\./);
  assert.match(small.prompt, /Delegated output is evidence/, "the feature's step constraint");
  assert.doesNotMatch(small.prompt, /Big extra/);
  assert.match(big.prompt, /Big extra for X\.\n\nAlways appended\.$/);
  assert.deepEqual(compiled.metaGuidance.slice(0, 1), ["Own guidance."]);
  assert.match(compiled.metaGuidance[1]!, /^DELEGATION:/);
  assert.equal(compiled.capabilities.delegation, "preferred");
  const second = advanceState(compiled, initialState(compiled, {}), { context: {} }).state;
  assert.equal(pendingStep(compiled, second, {})!.agentRole, "You are the workflow's role.");
  const again = await compile(
    JSON.stringify(JSON.parse(wf([{ id: "t", title: "T", prompt: "Plain" }]))),
  );
  assert.equal(
    JSON.stringify(again),
    JSON.stringify(await compile(wf([{ id: "t", title: "T", prompt: "Plain" }]))),
  );
});

const ROUTINE = (prompt: string) =>
  JSON.stringify({
    id: "user.routine-check",
    name: "Check routine",
    description: "d",
    version: "1",
    metaGuidance: ["Routine rule."],
    steps: [
      { id: "one", title: "One", prompt: `${prompt} into {{deliverableName}}` },
      { id: "two", title: "Two", prompt: "Second" },
    ],
  });
const CALLER = wf([
  { id: "start", title: "Start", prompt: "Start" },
  {
    id: "check",
    title: "Check",
    templateCall: {
      templateId: "user.templates.routine.check",
      args: { deliverableName: "out.md" },
    },
    runCondition: { var: "skip", not_equals: true },
  },
]);

Deno.test("templateCall expands a routine at compile time, args filled, inside the hash", async () => {
  const routine: SourceFile = { source: "user", file: "r.json", text: ROUTINE("Check") };
  const results = await loadWorkflowFiles([
    { source: "user", file: "t.json", text: CALLER },
    routine,
  ]);
  assert.ok(results.every((r) => r.ok));
  const [caller, loadedRoutine] = results.map((r) => r.ok ? r.workflow : null);
  assert.equal(loadedRoutine!.kind, "routine");
  const compiled = caller!.compiled;
  const { trail, prompts } = walk(compiled, {});
  assert.deepEqual(trail, ["start", "check--one", "check--two"]);
  assert.match(
    prompts[1]!,
    /runs the routine `user\.routine-check` \(Check routine\) with deliverableName = out\.md/,
  );
  assert.match(prompts[1]!, /- Routine rule\.\n\nCheck into out\.md$/);
  assert.deepEqual(
    walk(compiled, { skip: true }).trail,
    ["start"],
    "the call's runCondition guards every expanded step",
  );
  const same = await loadWorkflowFiles([{ source: "user", file: "t.json", text: CALLER }, routine]);
  assert.equal(same[0]!.ok && same[0]!.workflow.hash, caller!.hash, "same files, same hash");
  const changed = await loadWorkflowFiles([
    { source: "user", file: "t.json", text: CALLER },
    { source: "user", file: "r.json", text: ROUTINE("Verify") },
  ]);
  assert.ok(changed[0]!.ok);
  assert.notEqual(
    changed[0]!.ok && changed[0]!.workflow.hash,
    caller!.hash,
    "a changed routine changes the caller's hash",
  );
});

Deno.test("unknown template, feature, snippet and contract ids are compile errors listing the known ones", async () => {
  const t = await issues(
    wf([{ id: "s", title: "S", templateCall: { templateId: "wr.templates.nope" } }]),
  );
  assert.ok(
    t.some((i) =>
      /unknown template `wr\.templates\.nope`; known templates: `wr\.templates\.capability_probe`/
        .test(i)
    ),
    t.join("\n"),
  );
  const f = await issues(
    wf([{ id: "s", title: "S", prompt: "p" }], { features: ["wr.features.nope"] }),
  );
  assert.ok(
    f.some((i) =>
      /^features\[0\]: unknown feature `wr\.features\.nope`; known features: .*`wr\.features\.subagent_guidance`/
        .test(i)
    ),
    f.join("\n"),
  );
  const r = await issues(
    wf([{ id: "s", title: "S", promptBlocks: { goal: [{ kind: "ref", refId: "wr.refs.nope" }] } }]),
  );
  assert.ok(
    r.some((i) =>
      /unknown snippet ref `wr\.refs\.nope`; known refs: .*`wr\.refs\.notes_first_durability`/.test(
        i,
      )
    ),
    r.join("\n"),
  );
  const c = await issues(
    wf([{
      id: "s",
      title: "S",
      prompt: "p",
      outputContract: { contractRef: "wr.contracts.nope" },
    }]),
  );
  assert.ok(
    c.some((i) =>
      /^steps\[0\]\.outputContract\.contractRef: unknown contract `wr\.contracts\.nope`; known contracts: .*`wr\.contracts\.loop_control`/
        .test(i)
    ),
    c.join("\n"),
  );
  const b = await issues(
    wf([{
      id: "l",
      type: "loop",
      title: "L",
      loop: { type: "for", count: 1, maxIterations: 1 },
      body: "ghost",
    }]),
  );
  assert.ok(b.some((i) => i.includes("body `ghost` is not a top-level step id")), b.join("\n"));
});

Deno.test("a required web_browsing capability injects an early probe with its output contract", async () => {
  const compiled = await compile(wf([{ id: "s", title: "S", prompt: "p" }], {
    capabilities: { web_browsing: "required" },
  }));
  const first = pendingStep(compiled, initialState(compiled, {}), {})!;
  assert.equal(first.stepId, "capability-probe-web_browsing");
  assert.equal(first.outputContract?.contractRef, "wr.contracts.capability_observation");
  assert.ok(compiled.contracts["wr.contracts.capability_observation"]?.schema);
  assert.ok(
    parseWorkflowText(
      wf([{ id: "s", title: "S", prompt: "p" }], { capabilities: { teleport: "required" } }),
      "x",
    ).ok === false,
  );
});

Deno.test("a format-1 snapshot pinned before this format still runs", () => {
  const old = {
    format: 1,
    id: "user.old",
    name: "Old",
    description: "d",
    version: "1",
    metaGuidance: [],
    steps: [
      { id: "a", title: "A", promptTemplate: "Do {{x}}", requireConfirmation: false },
      {
        id: "b",
        title: "B",
        promptTemplate: "b",
        requireConfirmation: true,
        runCondition: { var: "x", equals: "go" },
      },
    ],
  } as unknown as CompiledWorkflow;
  const compiled = normalizeCompiled(old);
  const v1 = { v: 1, pc: 0 } as unknown as RunState;
  assert.equal(pendingStep(compiled, v1, { x: "go" })!.prompt, "Do go");
  const next = advanceState(compiled, v1, { context: { x: "go" } }).state;
  assert.deepEqual(pendingStep(compiled, next, { x: "go" }), {
    stepId: "b",
    title: "B",
    prompt: "b",
    requireConfirmation: true,
  });
  assert.equal(
    pendingStep(compiled, advanceState(compiled, v1, { context: { x: "no" } }).state, {}),
    null,
  );
});

Deno.test("assessments are compiled and rendered into the step's prompt; wrong references fail to compile", async () => {
  const assessments = [{
    id: "gate",
    purpose: "Quality gate.",
    dimensions: [{ id: "depth", purpose: "How deep.", levels: ["low", "high"] }],
  }];
  const step = {
    id: "s",
    title: "S",
    prompt: "Review.",
    assessmentRefs: ["gate"],
    assessmentConsequences: [{
      when: { anyEqualsLevel: "low" },
      effect: { kind: "require_followup", guidance: "Dig deeper." },
    }],
  };
  const compiled = await compile(wf([step], { assessments }));
  assert.equal(
    pendingStep(compiled, initialState(compiled, {}), {})!.prompt,
    'Review.\n\n## Assessment\nRate every dimension below and put one `wr.assessment` artifact per assessment in output.artifacts, with exactly one of the listed levels per dimension; a missing or unknown rating blocks the acknowledgement.\n- `gate`: Quality gate.\n  - `depth` (low | high): How deep.\n  Artifact: `{"kind":"wr.assessment","assessmentId":"gate","dimensions":{"depth":"<low | high>"}}`\nIf any dimension is `low`, the step stays pending until you follow up and acknowledge again with a new assessment: Dig deeper.',
  );
  const s = compiled.steps[0] as CompiledStep;
  assert.deepEqual(s.assessments, [{
    id: "gate",
    dimensions: [{ id: "depth", levels: ["low", "high"], required: true }],
  }]);
  assert.deepEqual(s.consequences, [{ anyEqualsLevel: "low", guidance: "Dig deeper." }]);
  const found = await issues(wf([{ ...step, assessmentRefs: ["nope"] }], { assessments }));
  assert.ok(
    found.some((i) => i.includes("unknown assessment `nope`; this workflow's assessments: `gate`")),
  );
  const when = (w: Record<string, unknown>) => ({
    ...step,
    assessmentConsequences: [{ when: w, effect: { kind: "require_followup", guidance: "G." } }],
  });
  const scoped = await issues(wf([when({ anyEqualsLevel: "low", forAssessment: "other" })], {
    assessments,
  }));
  assert.ok(scoped.some((i) => i.includes("`other` is not one of this step's assessmentRefs")));
  const level = await issues(wf([when({ anyEqualsLevel: "medium" })], { assessments }));
  assert.ok(level.some((i) => i.includes("no dimension it reads has the level `medium`")));
  const orphan = await issues(
    wf([{ ...when({ anyEqualsLevel: "low" }), assessmentRefs: undefined }], {
      assessments,
    }),
  );
  assert.ok(orphan.some((i) => i.includes("`assessmentConsequences` needs `assessmentRefs`")));
});

Deno.test("a parallel step compiles to its delegations and an injected synthesis step after it", async () => {
  const compiled = await compile(wf([
    {
      id: "fan",
      type: "parallel",
      title: "Fan out",
      runCondition: { var: "go", equals: true },
      parallelDelegations: [
        { workflowId: "user.a", goal: "A", args: { part: "x" }, contextMapping: { k: "k2" } },
        { workflowId: "user.b", runCondition: { var: "b", equals: true }, modelTier: "heavy" },
      ],
      synthesis: {
        prompt: "Merge them.",
        outputContract: { contractRef: "wr.contracts.loop_control" },
      },
    },
    { id: "after", title: "After", prompt: "After." },
  ]));
  const [fan, synthesis, after] = compiled.steps as CompiledStep[];
  assert.equal(fan!.id, "fan");
  assert.equal(fan!.notesOptional, true, "the synthesis step carries the notes");
  assert.deepEqual(fan!.delegations, [
    { workflowId: "user.a", goal: "A", args: { part: "x" }, contextMapping: { k: "k2" } },
    { workflowId: "user.b", runCondition: { var: "b", equals: true }, modelTier: "heavy" },
  ]);
  assert.equal(synthesis!.id, "fan-synthesis");
  assert.equal(synthesis!.synthesisOf, "fan");
  assert.deepEqual(synthesis!.runCondition, { var: "go", equals: true });
  assert.equal(synthesis!.outputContract?.contractRef, "wr.contracts.loop_control");
  assert.match(synthesis!.promptTemplate, /^Merge them\./);
  assert.equal(after!.id, "after");
  // A step already named like the injected one is a compile error.
  await assert.rejects(
    compile(wf([
      { id: "fan", type: "parallel", title: "F", parallelDelegations: [{ workflowId: "user.a" }] },
      { id: "fan-synthesis", title: "Clash", prompt: "x" },
    ])),
    /fan-synthesis/,
  );
});
