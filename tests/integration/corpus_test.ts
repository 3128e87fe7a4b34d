/**
 * The WorkRail corpus runs unmodified: every file compiles, every workflow and example is driven
 * to completion by a scripted agent, and across the runs every conditional branch (a step or
 * loop with a runCondition, a prompt fragment with a `when`) is taken at least once. Its gates
 * hold as WorkRail enforces them: notes are required, and every assessment follow-up blocks.
 */
import assert from "node:assert/strict";
import type { EngineDeps } from "../../engine/model/ports.ts";
import type { StepResponse } from "../../engine/answers/responses.ts";
import { renderStepResponse } from "../../engine/answers/text.ts";
import { continueWorkflow } from "../../engine/use_cases/continue_workflow.ts";
import { loadWorkflowFile, loadWorkflowFiles } from "../../engine/workflow/catalog.ts";
import type {
  CompiledNode,
  CompiledStep,
  CompiledWorkflow,
} from "../../engine/workflow/compiled.ts";
import { evaluateCondition } from "../../engine/workflow/conditions.ts";
import type { Condition } from "../../engine/workflow/schema.ts";
import {
  CORPUS_DIR,
  corpusFiles,
  corpusSources,
  corpusWaymark,
  loadCorpus,
} from "../helpers/corpus.ts";
import {
  assessmentsFor,
  assignments,
  driveToCompletion,
  loopInputs,
  setVar,
  type Turn,
} from "../helpers/scripted_agent.ts";

const ignore = CORPUS_DIR === null;

Deno.test({
  name: "every corpus file compiles as an ordinary source",
  ignore,
  fn: async () => {
    const files = corpusFiles();
    const { workflows, errors } = await loadCorpus();
    assert.deepEqual(errors, []);
    assert.equal(workflows.length, files.length);
    assert.ok(files.length >= 48, `corpus has ${files.length} files`);
    const routines = workflows.filter((w) => w.kind === "routine");
    assert.ok(routines.length >= 10);
    assert.ok(routines.every((w) => w.file.startsWith("corpus:routines/")));
    console.log(
      `corpus: ${files.length} files compiled (${routines.length} routines, ${
        workflows.length - routines.length
      } workflows)`,
    );
  },
});

Deno.test({
  name: "a corpus wr.* workflow loads as WorkRail's own id from every ordinary source",
  ignore,
  fn: async () => {
    const file = corpusFiles().find((f) => f.rel === "wr.shaping.json")!;
    for (const source of ["project", "user", "extra"] as const) {
      const loaded = await loadWorkflowFile({ source, file: file.path, text: file.text });
      assert.ok(loaded.ok, JSON.stringify(!loaded.ok && loaded.error));
      if (!loaded.ok) return;
      assert.equal(loaded.workflow.id, "wr.shaping");
      assert.equal(loaded.workflow.source, source);
    }
  },
});

interface Branch {
  key: string;
  /** Conditions that must all hold to take it (enclosing ones first). */
  conditions: Condition[];
  taken(steps: readonly string[], prompts: readonly string[]): boolean;
}

function stepIdsUnder(node: CompiledNode): string[] {
  return node.kind === "step" ? [node.id] : node.body.flatMap(stepIdsUnder);
}

function loopsOf(nodes: readonly CompiledNode[], out: CompiledNode[] = []): CompiledNode[] {
  for (const n of nodes) {
    if (n.kind === "loop") {
      out.push(n);
      loopsOf(n.body, out);
    }
  }
  return out;
}

/** `base` with every target's conditions made to hold, as the scripted agent sets them. */
function targetContext(
  base: Record<string, unknown>,
  targets: readonly Branch[],
): Record<string, unknown> {
  const context = structuredClone(base);
  for (const c of targets.flatMap((t) => t.conditions)) {
    for (const [k, v] of Object.entries(assignments(c, true))) setVar(context, k, v);
  }
  return context;
}

/**
 * The first branch of `open`, and every later one whose conditions can hold in the same run
 * as those already chosen: one run then takes several branches (121 runs became about half),
 * and a branch a packed run misses is still open for a run of its own.
 */
function packTargets(base: Record<string, unknown>, open: readonly Branch[]): Branch[] {
  const chosen = [open[0]!];
  for (const b of open.slice(1)) {
    const trial = [...chosen, b];
    const context = targetContext(base, trial);
    if (trial.every((t) => t.conditions.every((c) => evaluateCondition(c, context)))) {
      chosen.push(b);
    }
  }
  return chosen;
}

function branchesOf(nodes: readonly CompiledNode[], enclosing: Condition[], out: Branch[]) {
  for (const node of nodes) {
    const here = node.runCondition ? [...enclosing, node.runCondition] : enclosing;
    if (node.runCondition) {
      const ids = stepIdsUnder(node);
      out.push({
        key: `${node.id} (runCondition)`,
        conditions: here,
        taken: (steps) => steps.some((s) => ids.includes(s)),
      });
    }
    if (node.kind === "loop") branchesOf(node.body, here, out);
    else {
      (node.fragments ?? []).forEach((f, i) => {
        if (!f.when) return;
        const probe = f.text.split("{{")[0]!.slice(0, 60);
        const id = node.id;
        out.push({
          key: `${node.id} (fragment ${i})`,
          conditions: [...here, f.when],
          taken: (steps, prompts) => steps.some((s, j) => s === id && prompts[j]!.includes(probe)),
        });
      });
    }
  }
  return out;
}

Deno.test({
  name: "every corpus workflow and example runs to completion, taking every conditional branch",
  ignore,
  fn: async () => {
    const { set } = await loadCorpus();
    const { deps, cleanup } = await corpusWaymark(set);
    let runs = 0;
    let total = 0;
    let takenCount = 0;
    let driven = 0;
    let childRuns = 0;
    const delegating = new Set<string>();
    const missed: string[] = [];
    const contradictory: string[] = [];
    let loopsTotal = 0;
    const loopsRepeated = new Set<string>();
    try {
      for (const workflow of set.workflows.filter((w) => w.kind === "workflow")) {
        const compiled: CompiledWorkflow = workflow.compiled;
        const branches = branchesOf(compiled.steps, [], []);
        const loops = loopsOf(compiled.steps);
        loopsTotal += loops.length;
        const taken = new Set<string>();
        const tried = new Set<string>();
        const runOnce = async (targets: Branch[] = []) => {
          const context = targetContext(loopInputs(compiled.steps), targets);
          const run = await driveToCompletion(deps, { workflowId: workflow.id, compiled, context });
          runs++;
          childRuns += run.children;
          if (run.children > 0) delegating.add(workflow.id);
          assert.equal(run.last.isComplete, true, `${workflow.id} did not complete`);
          assert.equal(run.last.pending, null);
          for (const b of branches) if (b.taken(run.steps, run.prompts)) taken.add(b.key);
          for (const loop of loops) {
            const first = stepIdsUnder(loop)[0]!;
            if (run.steps.filter((s) => s === first).length >= 2) {
              loopsRepeated.add(`${workflow.id}:${loop.id}`);
            }
          }
        };
        await runOnce();
        for (const b of branches) {
          // A branch whose own conditions contradict each other can never be taken.
          const context: Record<string, unknown> = {};
          for (const c of b.conditions) {
            for (const [k, v] of Object.entries(assignments(c, true))) setVar(context, k, v);
          }
          if (!b.conditions.every((c) => evaluateCondition(c, context))) {
            tried.add(b.key);
            contradictory.push(`${workflow.id}: ${b.key}`);
          }
        }
        for (;;) {
          const open = branches.filter((b) => !taken.has(b.key) && !tried.has(b.key));
          if (open.length === 0) break;
          tried.add(open[0]!.key);
          await runOnce(packTargets(loopInputs(compiled.steps), open));
        }
        driven++;
        total += branches.length;
        takenCount += taken.size;
        for (const b of branches) {
          const key = `${workflow.id}: ${b.key}`;
          if (!taken.has(b.key) && !contradictory.includes(key)) missed.push(key);
        }
      }
    } finally {
      await cleanup();
    }
    console.log(
      `corpus: ${driven} workflows driven to completion in ${runs} scripted runs; ` +
        `${takenCount}/${total} conditional branches taken; ` +
        `${loopsRepeated.size}/${loopsTotal} loops ran a second iteration; ` +
        `${childRuns} child runs of parallel steps driven (${[...delegating].join(", ")})` +
        (contradictory.length
          ? `; ${contradictory.length} unreachable in the corpus itself (conditions contradict ` +
            `their enclosing ones): ${contradictory.join(", ")}`
          : ""),
    );
    assert.ok(driven >= 30, `drove ${driven} workflows`);
    // Both corpus workflows with parallel steps delegated for real: child runs, not prose.
    assert.deepEqual([...delegating].sort(), ["wr.coding-task", "wr.mr-review"]);
    assert.deepEqual(missed, []);
    assert.equal(loopsRepeated.size, loopsTotal, "every loop ran at least two iterations");
  },
});

/** Every step that asks for assessments, with the conditions that must hold to reach it. */
function assessmentSteps(
  nodes: readonly CompiledNode[],
  enclosing: Condition[] = [],
  out: { step: CompiledStep; conditions: Condition[] }[] = [],
) {
  for (const node of nodes) {
    const here = node.runCondition ? [...enclosing, node.runCondition] : enclosing;
    if (node.kind === "loop") assessmentSteps(node.body, here, out);
    else if (node.assessments) out.push({ step: node, conditions: here });
  }
  return out;
}

async function ackWith(deps: EngineDeps, from: StepResponse, turn: Turn["ack"]) {
  const next = await continueWorkflow(deps, {
    stateToken: from.stateToken,
    ackToken: from.ackToken!,
    context: turn.context,
    output: turn.output as never,
  });
  assert.ok(next.ok, JSON.stringify(!next.ok && next.error));
  return next.value;
}

Deno.test({
  name:
    "every corpus workflow with assessments: notes are required, each follow-up blocks, a passing assessment advances",
  ignore,
  fn: async () => {
    const { set } = await loadCorpus();
    const { deps, cleanup } = await corpusWaymark(set);
    let workflows = 0;
    let followUps = 0;
    try {
      for (const workflow of set.workflows.filter((w) => w.kind === "workflow")) {
        const compiled = workflow.compiled;
        const targets = assessmentSteps(compiled.steps);
        if (targets.length === 0) continue;
        workflows++;
        for (const { step: target, conditions } of targets) {
          const context = loopInputs(compiled.steps);
          for (const c of conditions) {
            for (const [k, v] of Object.entries(assignments(c, true))) setVar(context, k, v);
          }
          let notesChecked = false;
          let reached = false;
          await driveToCompletion(deps, {
            workflowId: workflow.id,
            compiled,
            context,
            onTurn: async ({ response, step, ack }) => {
              let from = response;
              if (!notesChecked && !response.pending!.notesOptional) {
                notesChecked = true;
                const { notesMarkdown: _, ...rest } = ack.output;
                from = await ackWith(deps, from, { ...ack, output: rest as never });
                assert.equal(from.kind, "blocked", `${workflow.id}: ${step.id} without notes`);
                assert.deepEqual(from.blockers!.map((b) => [b.code, b.pointer]), [[
                  "MISSING_REQUIRED_NOTES",
                  { kind: "workflow_step", stepId: step.id },
                ]]);
                assert.match(renderStepResponse(from), /BLOCKED[\s\S]*MISSING_REQUIRED_NOTES/);
              }
              if (step.id !== target.id || reached) return from;
              reached = true;
              for (const c of step.consequences ?? []) {
                const artifacts = assessmentsFor(step, c);
                from = await ackWith(deps, from, {
                  ...ack,
                  output: { ...ack.output, artifacts },
                });
                const key = `${workflow.id}: ${step.id} at ${c.anyEqualsLevel}`;
                assert.equal(from.kind, "blocked", key);
                assert.equal(from.pending!.stepId, step.id, key);
                const fired = from.blockers!.filter((b) => b.suggestedFix === c.guidance);
                assert.equal(fired.length, 1, `${key}: ${JSON.stringify(from.blockers)}`);
                assert.equal(fired[0]!.code, "ASSESSMENT_FOLLOWUP_REQUIRED");
                assert.equal(fired[0]!.pointer.kind, "assessment_dimension");
                followUps++;
              }
              return from;
            },
          });
          assert.ok(notesChecked, `${workflow.id}: no step required notes`);
          assert.ok(reached, `${workflow.id}: ${target.id} was not reached`);
        }
      }
    } finally {
      await cleanup();
    }
    console.log(
      `corpus: ${workflows} workflows with assessments; ${followUps} follow-ups blocked, then passed`,
    );
    assert.ok(workflows >= 13, `only ${workflows} corpus workflows declare assessments`);
  },
});

Deno.test({
  name: "changing a corpus routine changes the hash of exactly the workflows that call it",
  ignore,
  fn: async () => {
    const sources = corpusSources();
    const hashes = async (files: typeof sources) => {
      const results = await loadWorkflowFiles(files);
      return new Map(results.map((r) => r.ok ? [r.workflow.id, r.workflow.hash] : ["", ""]));
    };
    const before = await hashes(sources);
    assert.deepEqual(await hashes(sources), before, "the same files twice, the same hashes");
    const edited = sources.map((s) =>
      s.file === "corpus:routines/tension-driven-design.json"
        ? { ...s, text: s.text.replace("Generate Candidates", "Generate Options") }
        : s
    );
    const after = await hashes(edited);
    const changed = [...before.keys()].filter((id) => before.get(id) !== after.get(id)).sort();
    assert.deepEqual(changed, [
      "routine-injection-example",
      "wr.cross-platform-code-conversion",
      "wr.discovery",
      "wr.game-design",
      "wr.routine-tension-driven-design",
    ]);
  },
});
