/**
 * Enforcement on continue_workflow: every blocker code this engine produces, in each autonomy
 * mode (blocked in guided and full_auto_stop_on_user_deps, a critical gap and an advance under
 * full_auto_never_stop), blocked attempts as graph nodes, byte-identical replays of a blocked
 * attempt, bounds and ordering of blockers, capabilities per branch, divergence markers and
 * preference recommendations.
 */
import assert from "node:assert/strict";
import type { EngineDeps } from "../../engine/model/ports.ts";
import type { StepResponse } from "../../engine/answers/responses.ts";
import { renderStepResponse } from "../../engine/answers/text.ts";
import { continueWorkflow } from "../../engine/use_cases/continue_workflow.ts";
import { startWorkflow } from "../../engine/use_cases/start_workflow.ts";
import { loadWorkflowFiles, resolveCatalog } from "../../engine/workflow/catalog.ts";
import type { Autonomy } from "../../engine/model/vocabulary.ts";
import { openWaymark, type Waymark } from "../../mod.ts";
import { freshPostgresUrl, testingOnPostgres } from "../helpers/postgres.ts";
import { connect, ok, tempHome } from "../helpers/server.ts";
import { placeOf } from "../helpers/answers.ts";

const BLOCKING: Autonomy[] = ["guided", "full_auto_stop_on_user_deps"];

const GATES = JSON.stringify({
  id: "user.gates",
  name: "Gates",
  description: "Every kind of gate.",
  version: "1.0.0",
  recommendedPreferences: { recommendedAutonomy: "full_auto_stop_on_user_deps" },
  capabilities: { web_browsing: "required", delegation: "preferred" },
  steps: [
    {
      id: "decide",
      title: "Decide",
      prompt: "Review and give a verdict.",
      outputContract: { contractRef: "wr.contracts.review_verdict" },
    },
    {
      id: "write",
      title: "Write",
      prompt: "Write the scope.",
      validationCriteria: [
        { type: "contains", value: "IN SCOPE", message: "Must say what is in scope" },
        { type: "length", min: 20 },
      ],
    },
    {
      id: "ask",
      title: "Ask",
      prompt: "Get the design doc from the user.",
      userDependencies: [{
        contextKey: "designDoc",
        reason: "user_provided_document",
        message: "The path of the design document.",
      }],
    },
    { id: "done", title: "Done", prompt: "Finish {{designDoc}}." },
  ],
});

const MANY = JSON.stringify({
  id: "user.many",
  name: "Many",
  description: "Many blockers at once.",
  version: "1.0.0",
  steps: [{
    id: "all",
    title: "All",
    prompt: "Everything at once.",
    outputContract: { contractRef: "wr.contracts.gate_verdict" },
    userDependencies: Array.from({ length: 10 }, (_, i) => ({
      contextKey: `key${9 - i}`,
      reason: "user_decision",
      message: `Décision ${9 - i}: ${"é".repeat(300)}`,
    })),
  }, { id: "end", title: "End", prompt: "End." }],
});

async function setup(): Promise<{ waymark: Waymark; deps: EngineDeps; close(): Promise<void> }> {
  const home = await Deno.makeTempDir({ prefix: "waymark-enforce-" });
  const dbUrl = testingOnPostgres() ? await freshPostgresUrl() : ":memory:";
  const waymark = await openWaymark({ home, dbUrl, workspace: home });
  const results = await loadWorkflowFiles([
    { source: "user", file: "gates.json", text: GATES },
    { source: "user", file: "many.json", text: MANY },
  ]);
  const workflows = results.flatMap((r) => r.ok ? [r.workflow] : []);
  assert.equal(workflows.length, 2, JSON.stringify(results));
  const set = resolveCatalog(workflows, []);
  const deps = { ...waymark.deps, workflows: { load: () => Promise.resolve(set) } };
  return {
    waymark,
    deps,
    async close() {
      await waymark.close();
      await Deno.remove(home, { recursive: true }).catch(() => {});
    },
  };
}

async function ack(
  deps: EngineDeps,
  from: StepResponse,
  extra: Omit<Parameters<typeof continueWorkflow>[1], "stateToken" | "ackToken"> = {},
): Promise<StepResponse> {
  const result = await continueWorkflow(deps, {
    stateToken: from.stateToken,
    ackToken: from.ackToken!,
    ...extra,
  });
  if (!result.ok) throw new Error(JSON.stringify(result.error));
  return result.value;
}

const OBSERVED = (status: string) => ({
  output: {
    artifacts: [{ kind: "wr.capability_observation", capability: "web_browsing", status }],
  },
});
const VERDICT = {
  kind: "wr.review_verdict",
  verdict: "clean",
  confidence: "high",
  findings: [],
  summary: "ok",
};

/** The failing acknowledgement for each code, at the step where it can happen. */
const CASES = [
  { code: "MISSING_REQUIRED_OUTPUT", step: "capability-probe-web_browsing", send: {} },
  {
    code: "INVALID_REQUIRED_OUTPUT",
    step: "capability-probe-web_browsing",
    send: OBSERVED("maybe"),
  },
  {
    code: "REQUIRED_CAPABILITY_UNAVAILABLE",
    step: "capability-probe-web_browsing",
    send: OBSERVED("unavailable"),
  },
  {
    code: "REQUIRED_CAPABILITY_UNKNOWN",
    step: "capability-probe-web_browsing",
    send: OBSERVED("unknown"),
  },
  { code: "MISSING_REQUIRED_OUTPUT", step: "decide", send: { output: { notesMarkdown: "x" } } },
  {
    code: "INVALID_REQUIRED_OUTPUT",
    step: "decide",
    send: { output: { artifacts: [{ ...VERDICT, verdict: "fine" }] } },
  },
  { code: "MISSING_REQUIRED_NOTES", step: "write", send: {} },
  {
    code: "INVALID_REQUIRED_OUTPUT",
    step: "write",
    send: { output: { notesMarkdown: "long enough, but it never names the scope" } },
  },
  { code: "USER_ONLY_DEPENDENCY", step: "ask", send: { output: { notesMarkdown: "asked" } } },
] as const;

/** The passing acknowledgement of each step. */
const PASS: Record<string, Record<string, unknown>> = {
  "capability-probe-web_browsing": OBSERVED("available"),
  decide: { output: { artifacts: [VERDICT] } },
  write: { output: { notesMarkdown: "IN SCOPE: the importer. OUT OF SCOPE: the exporter." } },
  ask: { context: { designDoc: "docs/design.md" }, output: { notesMarkdown: "Got the doc." } },
};

async function walkTo(
  deps: EngineDeps,
  stepId: string,
  autonomy: Autonomy,
): Promise<StepResponse> {
  const started = await startWorkflow(deps, {
    workflowId: "user.gates",
    preferences: { autonomy },
  });
  assert.ok(started.ok);
  let r = started.value;
  while (r.pending!.stepId !== stepId) r = await ack(deps, r, PASS[r.pending!.stepId] as never);
  return r;
}

for (const autonomy of BLOCKING) {
  Deno.test(`${autonomy}: each failing acknowledgement is blocked, recorded, and retryable`, async () => {
    const { deps, waymark, close } = await setup();
    try {
      for (const c of CASES) {
        const at = await walkTo(deps, c.step, autonomy);
        const blocked = await ack(deps, at, c.send as never);
        assert.equal(blocked.kind, "blocked", `${c.code} at ${c.step}`);
        assert.equal(blocked.blockers!.length, 1, JSON.stringify(blocked.blockers));
        const [b] = blocked.blockers!;
        assert.equal(b!.code, c.code);
        const pointerKind = c.code.startsWith("REQUIRED_CAPABILITY")
          ? "capability"
          : c.code === "USER_ONLY_DEPENDENCY"
          ? "context_key"
          : c.step === "write"
          ? "workflow_step"
          : "output_contract";
        assert.equal(b!.pointer.kind, pointerKind);
        assert.ok(b!.suggestedFix);
        assert.ok(blocked.example, "an example payload");
        assert.equal(blocked.pending!.stepId, c.step, "the same pending step");
        assert.equal(placeOf(blocked).nodeId, placeOf(at).nodeId);
        assert.notEqual(blocked.ackToken, at.ackToken, "a fresh ack");
        assert.equal(blocked.isComplete, undefined, "left out while false");
        assert.match(renderStepResponse(blocked), new RegExp(`BLOCKED[\\s\\S]*${c.code}`));
        const node = await waymark.store.db.selectFrom("nodes").select(["node_kind", "parent_id"])
          .where("node_id", "=", blocked.blockedAttempt!.nodeId).executeTakeFirstOrThrow();
        assert.deepEqual(node, { node_kind: "blocked_attempt", parent_id: placeOf(at).nodeId });
        // Retrying with the fresh ack and a passing payload advances from the same node.
        const retried = await ack(deps, blocked, PASS[c.step] as never);
        assert.equal(retried.kind, "ok");
        assert.notEqual(retried.pending?.stepId, c.step);
        assert.equal(retried.forked, undefined, "a blocked attempt is not a branch");
      }
    } finally {
      await close();
    }
  });
}

Deno.test("full_auto_never_stop: each failure becomes a critical gap and the run advances", async () => {
  const { deps, waymark, close } = await setup();
  try {
    for (const c of CASES) {
      const at = await walkTo(deps, c.step, "full_auto_never_stop");
      const next = await ack(deps, at, c.send as never);
      assert.equal(next.kind, "ok", `${c.code} at ${c.step} must not block`);
      assert.notEqual(next.pending?.stepId, c.step);
      assert.equal(next.blockers, undefined);
      assert.ok(
        next.gaps?.some((g) => g.code === c.code && g.severity === "critical"),
        JSON.stringify(next.gaps),
      );
      assert.match(renderStepResponse(next), new RegExp(`critical/${c.code}`));
      if (c.code === "REQUIRED_CAPABILITY_UNAVAILABLE") {
        assert.match(next.pending!.prompt, /Web browsing was observed to be unavailable/);
      }
    }
    const gaps = await waymark.store.db.selectFrom("events").select("payload")
      .where("kind", "=", "gap_recorded").execute();
    const codes = new Set(gaps.map((g) => JSON.parse(g.payload).code));
    for (const c of CASES) assert.ok(codes.has(c.code), `gap_recorded for ${c.code}`);
    const blocked = await waymark.store.db.selectFrom("nodes").select("node_id")
      .where("node_kind", "=", "blocked_attempt").execute();
    assert.equal(blocked.length, 0);
  } finally {
    await close();
  }
});

Deno.test("a replayed blocked attempt returns the identical bytes and records nothing new", async () => {
  const { deps, waymark, close } = await setup();
  try {
    const at = await walkTo(deps, "decide", "guided");
    const first = await ack(deps, at);
    assert.equal(first.kind, "blocked");
    const before = await waymark.store.counts();
    const again = await ack(deps, at);
    assert.equal(JSON.stringify(again), JSON.stringify(first));
    assert.equal(renderStepResponse(again), renderStepResponse(first));
    assert.deepEqual(await waymark.store.counts(), before);
    const recorded = await waymark.store.db.selectFrom("attempts").select(["outcome", "response"])
      .where("result_node_id", "=", first.blockedAttempt!.nodeId).executeTakeFirstOrThrow();
    assert.equal(recorded.outcome, "blocked");
    assert.equal(recorded.response, JSON.stringify(first));
  } finally {
    await close();
  }
});

Deno.test("blockers are ordered by (code, pointer), at most 10, with bounded texts", async () => {
  const { deps, close } = await setup();
  try {
    const started = await startWorkflow(deps, { workflowId: "user.many" });
    assert.ok(started.ok);
    const blocked = await ack(deps, started.value);
    assert.equal(blocked.kind, "blocked");
    const blockers = blocked.blockers!;
    assert.equal(blockers.length, 10);
    assert.equal(blockers[0]!.code, "MISSING_REQUIRED_OUTPUT");
    const keys = blockers.slice(1).map((b) => (b.pointer as { key: string }).key);
    assert.deepEqual(keys, [...keys].sort());
    assert.deepEqual(keys, [
      "key0",
      "key1",
      "key2",
      "key3",
      "key4",
      "key5",
      "key6",
      "key7",
      "key8",
    ]);
    const bytes = (s: string) => new TextEncoder().encode(s).length;
    for (const b of blockers) {
      assert.ok(bytes(b.message) <= 512, `${bytes(b.message)} bytes`);
      assert.ok(bytes(b.suggestedFix ?? "") <= 1024);
    }
    assert.ok(blockers.some((b) => b.message.endsWith("…")), "long messages are cut and marked");
    assert.equal(Object.keys(blocked.example!.context!).length, 9);
    assert.equal(blocked.example!.output!.artifacts!.length, 1);
  } finally {
    await close();
  }
});

Deno.test("capability observations are per branch; a preferred one that is unavailable degrades", async () => {
  const { deps, waymark, close } = await setup();
  try {
    const atDecide = await walkTo(deps, "decide", "guided");
    assert.deepEqual(atDecide.capabilities, {
      delegation: { requested: "preferred", observed: "unknown" },
      web_browsing: { requested: "required", observed: "available" },
    });
    const degraded = await ack(deps, atDecide, {
      output: {
        artifacts: [VERDICT, {
          kind: "wr.capability_observation",
          capability: "delegation",
          status: "unavailable",
        }],
      } as never,
    });
    assert.equal(degraded.kind, "ok");
    assert.ok(degraded.warnings!.some((w) => w.code === "PREFERRED_CAPABILITY_UNAVAILABLE"));
    assert.match(degraded.pending!.prompt, /Delegation was observed to be unavailable/);
    assert.equal(degraded.capabilities!.delegation!.observed, "unavailable");
    // A fork from before the observation does not inherit it.
    const fresh = await continueWorkflow(deps, { stateToken: atDecide.stateToken });
    assert.ok(fresh.ok);
    const fork = await ack(deps, fresh.value, { output: { artifacts: [VERDICT] } as never });
    assert.ok(fork.forked);
    assert.doesNotMatch(fork.pending!.prompt, /Delegation was observed/);
    assert.equal(fork.capabilities!.delegation!.observed, "unknown");
    const observed = await waymark.store.db.selectFrom("events").select("payload")
      .where("kind", "=", "capability_observed").execute();
    assert.ok(observed.some((e) => JSON.parse(e.payload).status === "unavailable"));
  } finally {
    await close();
  }
});

Deno.test("divergence markers are recorded; invalid known artifacts are reported, not recorded", async () => {
  const { deps, waymark, close } = await setup();
  try {
    const at = await walkTo(deps, "decide", "guided");
    const next = await ack(deps, at, {
      output: {
        artifacts: [VERDICT, {
          kind: "wr.workflow_divergence",
          reason: "user_instruction",
          summary: "The user asked to skip the security pass.",
        }, { kind: "wr.workflow_divergence", reason: "whim", summary: "x" }],
      } as never,
    });
    assert.equal(next.kind, "ok");
    assert.ok(next.warnings!.some((w) => w.code === "INVALID_ARTIFACT_IGNORED"));
    const rows = await waymark.store.db.selectFrom("events").select("payload")
      .where("kind", "=", "divergence_recorded").execute();
    assert.equal(rows.length, 1);
    assert.equal(JSON.parse(rows[0]!.payload).reason, "user_instruction");
  } finally {
    await close();
  }
});

Deno.test("preferences: set at start, changed on continue, inherited, and warned above the recommendation", async () => {
  const { deps, close } = await setup();
  try {
    const started = await startWorkflow(deps, {
      workflowId: "user.gates",
      preferences: { autonomy: "full_auto_never_stop" },
    });
    assert.ok(started.ok);
    assert.ok(started.value.warnings!.some((w) => w.code === "PREFERENCE_ABOVE_RECOMMENDED"));
    const guided = await ack(deps, started.value, {
      ...OBSERVED("available"),
      preferences: { autonomy: "guided" },
    } as never);
    assert.equal(guided.preferences!.autonomy, "guided");
    // Guided now applies to the next decision: a missing verdict blocks.
    const blockedOnce = await ack(deps, guided);
    assert.equal(blockedOnce.kind, "blocked");
    // The old node still has the preferences of its time: the same failure is a gap there.
    const old = await continueWorkflow(deps, { stateToken: started.value.stateToken });
    assert.ok(old.ok);
    assert.equal(old.value.preferences!.autonomy, "full_auto_never_stop");
    const back = await ack(deps, blockedOnce, {
      output: { artifacts: [VERDICT] } as never,
      preferences: { autonomy: "full_auto_never_stop" },
    });
    assert.ok(back.warnings!.some((w) => w.code === "PREFERENCE_ABOVE_RECOMMENDED"));
  } finally {
    await close();
  }
});

Deno.test("over stdio MCP, a replayed blocked attempt is the same bytes (text and structured)", async () => {
  const home = await tempHome();
  await Deno.mkdir(`${home.home}/workflows`, { recursive: true });
  await Deno.writeTextFile(`${home.home}/workflows/gates.json`, GATES);
  const client = await connect(home.home, { process: true });
  try {
    const started = ok(
      await client.call("start_workflow", {
        workflowId: "user.gates",
        preferences: { autonomy: "full_auto_stop_on_user_deps" },
      }),
    );
    const args = { stateToken: started.stateToken, ackToken: started.ackToken };
    const first = await client.call("continue_workflow", args);
    const second = await client.call("continue_workflow", args);
    assert.equal(ok(first).kind, "blocked");
    assert.equal(ok(first).blockers[0].code, "MISSING_REQUIRED_OUTPUT");
    assert.equal(JSON.stringify(second), JSON.stringify(first));
  } finally {
    await client.close();
    await home.cleanup();
  }
});
