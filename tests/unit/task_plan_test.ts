/**
 * Runs as tasks, pure parts: a task's status as a function of the run, the questions a step's
 * user-only dependencies make, and the progress plan of a branch (loops show their iteration,
 * steps behind a false condition are skipped, the step waiting on the user is blocked), and the
 * excerpt of it a call's answer carries.
 */
import assert from "node:assert/strict";
import { DEFAULT_PREFERENCES } from "../../engine/model/preferences.ts";
import { taskStatus, userQuestions } from "../../engine/run/task_status.ts";
import { loadWorkflowFiles } from "../../engine/workflow/catalog.ts";
import type { CompiledWorkflow } from "../../engine/workflow/compiled.ts";
import {
  advanceState,
  currentStep,
  initialState,
  readState,
  type RunState,
} from "../../engine/workflow/interpreter.ts";
import {
  type Completion,
  planExcerpt,
  type PlanInput,
  planProgress,
  stepResults,
  type WorkflowProgress,
} from "../../engine/workflow/plan.ts";

async function compile(steps: unknown[]): Promise<CompiledWorkflow> {
  const text = JSON.stringify({ id: "user.t", name: "T", description: "d", version: "1", steps });
  const [loaded] = await loadWorkflowFiles([{ source: "user", file: "t.json", text }]);
  if (!loaded!.ok) throw new Error(JSON.stringify(loaded!.error.issues));
  return loaded!.workflow.compiled;
}

/** Acknowledges `n` steps from the start with `context`; the states and their completions. */
function walk(
  compiled: CompiledWorkflow,
  n: number,
  context: Record<string, unknown> = {},
): { tip: RunState; completions: Completion[] } {
  let state = initialState(compiled, context);
  const completions: Completion[] = [];
  for (let i = 0; i < n; i++) {
    completions.push({
      stepId: currentStep(compiled, state)!.id,
      frames: readState(state).frames,
      notesMarkdown: `notes ${i}`,
      artifactKinds: [],
    });
    state = advanceState(compiled, state, { context }).state;
  }
  return { tip: state, completions };
}

/** A loop of two steps, `b` and `c`, run `count` times. */
const rounds = (count: number) => ({
  id: "rounds",
  type: "loop",
  title: "Rounds",
  loop: { type: "for", count, maxIterations: 5 },
  body: [{ id: "b", title: "B", prompt: "b" }, { id: "c", title: "C", prompt: "c" }],
});

const statuses = (p: ReturnType<typeof planProgress>) =>
  Object.fromEntries(p.steps.map((s) => [s.name, s.status]));

Deno.test("a loop shows its running iteration; a body step done in an earlier one is pending again", async () => {
  const compiled = await compile([
    { id: "a", title: "A", prompt: "a" },
    rounds(2),
    { id: "d", title: "D", prompt: "d" },
  ]);
  const { tip, completions } = walk(compiled, 3); // a, b (1), c (1): now at b, iteration 2
  const plan = planProgress(compiled, {
    completions,
    tip: { state: tip, context: {} },
    blocked: false,
    goal: "g",
    truncated: false,
  });
  assert.deepEqual(statuses(plan), { a: "done", b: "current", c: "pending", d: "pending" });
  assert.deepEqual(plan.steps.find((s) => s.name === "c")!.loop, {
    loopId: "rounds",
    iteration: 2,
    maxIterations: 5,
  });
  assert.equal(plan.schema_version, 1);
  assert.match(plan.note, /Best effort/);
  const done = walk(compiled, 6); // the whole run
  const finished = planProgress(compiled, {
    completions: done.completions,
    tip: { state: done.tip, context: {} },
    blocked: false,
    goal: "g",
    truncated: false,
  });
  assert.deepEqual(statuses(finished), { a: "done", b: "done", c: "done", d: "done" });
  assert.equal(finished.steps.find((s) => s.name === "b")!.loop!.iteration, 2);
});

Deno.test("steps behind a false condition are skipped, behind and ahead; the waiting step is blocked", async () => {
  const compiled = await compile([
    { id: "a", title: "A", prompt: "a" },
    { id: "x", title: "X", prompt: "x", runCondition: { var: "extra", equals: true } },
    { id: "y", title: "Y", prompt: "y" },
    { id: "z", title: "Z", prompt: "z", runCondition: { var: "late", equals: true } },
  ]);
  const { tip, completions } = walk(compiled, 1);
  const at = { completions, tip: { state: tip, context: {} }, goal: "g", truncated: false };
  assert.deepEqual(statuses(planProgress(compiled, { ...at, blocked: false })), {
    a: "done",
    x: "skipped",
    y: "current",
    z: "skipped",
  });
  assert.equal(statuses(planProgress(compiled, { ...at, blocked: true })).y, "blocked");
  const later = planProgress(compiled, {
    ...at,
    tip: { state: tip, context: { late: true } },
    blocked: false,
  });
  assert.equal(statuses(later).z, "pending", "the plan follows the context as it is now");
  assert.deepEqual(stepResults(completions), { a: { notesPreview: "notes 0", artifacts: [] } });
});

Deno.test("a task's status is a pure function of the run", async () => {
  const compiled = await compile([
    {
      id: "connect",
      title: "Connect",
      prompt: "c",
      userDependencies: [
        { contextKey: "apiToken", reason: "user_credentials", message: "The token." },
        { contextKey: "approved", reason: "user_approval", message: "May it?" },
      ],
    },
  ]);
  const tip = { state: initialState(compiled, {}), context: {}, preferences: DEFAULT_PREFERENCES };
  const running = { status: "running" as const, corrupt: false };
  assert.equal(taskStatus({ run: running, compiled, tip }), "input_required");
  assert.equal(
    taskStatus({
      run: running,
      compiled,
      tip: { ...tip, context: { apiToken: "t", approved: true } },
    }),
    "working",
  );
  const neverStop = { ...DEFAULT_PREFERENCES, autonomy: "full_auto_never_stop" as const };
  assert.equal(
    taskStatus({ run: running, compiled, tip: { ...tip, preferences: neverStop } }),
    "working",
  );
  assert.equal(taskStatus({ run: { ...running, status: "complete" }, compiled, tip }), "completed");
  assert.equal(taskStatus({ run: { ...running, status: "aborted" }, compiled, tip }), "cancelled");
  assert.equal(taskStatus({ run: { ...running, corrupt: true }, compiled, tip }), "failed");
  assert.equal(taskStatus({ run: running, compiled: null, tip }), "failed");
  assert.deepEqual(
    userQuestions(compiled, tip).map((q) => [q.contextKey, q.type, q.secret]),
    [["apiToken", "string", true], ["approved", "boolean", false]],
  );
});

Deno.test("a long workflow's plan lists a window around its current step, and says what it left out", async () => {
  const compiled = await compile(
    Array.from({ length: 150 }, (_, i) => ({ id: `s${i}`, title: `S${i}`, prompt: "p" })),
  );
  const early = walk(compiled, 10);
  const first = planProgress(compiled, {
    completions: early.completions,
    tip: { state: early.tip, context: {} },
    blocked: false,
    goal: "g",
    truncated: false,
  });
  assert.equal(first.steps.length, 100);
  assert.equal(first.steps[0]!.name, "s0");
  assert.deepEqual(first.omitted, { before: 0, after: 50 });
  const late = walk(compiled, 120);
  const second = planProgress(compiled, {
    completions: late.completions.slice(-30),
    tip: { state: late.tip, context: {} },
    blocked: false,
    goal: "g",
    truncated: true,
  });
  assert.deepEqual(second.omitted, { before: 50, after: 0 });
  assert.equal(second.steps.find((s) => s.status === "current")!.name, "s120");
  assert.ok(
    second.steps.slice(0, 70).every((s) => s.status === "done"),
    "older steps count as done",
  );
});

/**
 * The rule a call's answer followed when it cut the whole plan (kept here as the reference):
 * `size` steps from two before the current (or blocked) one, inside the plan's window; with none
 * listed, its first steps when more follow the window, else its last (a pending tip is always
 * at a step the window lists, so "none" is a complete run).
 */
function cut(progress: WorkflowProgress, size: number) {
  const { note: _note, steps, omitted, ...rest } = progress;
  let from = 0;
  if (steps.length > size) {
    const at = steps.findIndex((s) => s.status === "current" || s.status === "blocked");
    const current = at < 0 ? (omitted?.after ? 0 : steps.length) : at;
    from = Math.max(0, Math.min(current - 2, steps.length - size));
  }
  const to = Math.min(steps.length, from + size);
  const before = (omitted?.before ?? 0) + from;
  const after = (omitted?.after ?? 0) + steps.length - to;
  return {
    ...rest,
    steps: steps.slice(from, to),
    ...(before + after > 0 ? { omitted: { before, after } } : {}),
  };
}

Deno.test("a plan's excerpt is the whole plan cut around its current step, byte for byte", async () => {
  const long = await compile(
    Array.from({ length: 230 }, (_, i) => ({
      id: `s${i}`,
      title: `S${i}`,
      prompt: "p",
      ...(i % 7 === 3 ? { runCondition: { var: "odd", equals: true } } : {}),
    })),
  );
  const looped = await compile([
    { id: "a", title: "A", prompt: "a" },
    { id: "x", title: "X", prompt: "x", runCondition: { var: "extra", equals: true } },
    rounds(3),
    { id: "d", title: "D", prompt: "d" },
    { id: "e", title: "E", prompt: "e" },
  ]);
  /** How many acknowledgements finish a run of `compiled` (the skipped steps take none). */
  const lengthOf = (compiled: CompiledWorkflow) => {
    let state = initialState(compiled, {});
    let n = 0;
    for (; currentStep(compiled, state); n++) {
      state = advanceState(compiled, state, { context: {} }).state;
    }
    return n;
  };
  let compared = 0;
  for (const compiled of [long, looped]) {
    const length = lengthOf(compiled);
    for (let n = 0; n <= length; n += compiled === long ? 7 : 1) {
      const { tip, completions } = walk(compiled, n);
      for (const blocked of [false, true]) {
        for (const truncated of [false, true]) {
          const at: PlanInput = {
            completions: truncated ? completions.slice(-20) : completions,
            tip: { state: tip, context: {} },
            blocked,
            goal: "g",
            truncated,
          };
          for (const size of [1, 3, 8, 12, 120]) {
            const excerpt = planExcerpt(compiled, at, size);
            const reference = cut(planProgress(compiled, at), size);
            assert.equal(JSON.stringify(excerpt), JSON.stringify(reference), `${n} ${size}`);
            compared++;
          }
        }
      }
    }
  }
  assert.ok(compared > 500, `${compared} cases`);
});
