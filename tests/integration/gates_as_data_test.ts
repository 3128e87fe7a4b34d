/**
 * Every gate as data, over a real stdio server with the v1 SDK client (which checks each answer
 * against the published output schema): `pending` says what an acknowledgement must carry
 * (required context keys, user-only dependencies, what the notes must contain, assessment
 * follow-ups, besides the contract and assessments), a scripted agent that reads only those
 * fields, never the prompt, passes every step, and a bare acknowledgement is blocked by exactly
 * the gates the fields announced. The text rendering carries the same.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { connect, ok, tempHome, type TestClient } from "../helpers/server.ts";
import { walkWorkflow } from "../helpers/mcp_agent.ts";

// deno-lint-ignore no-explicit-any
type Json = Record<string, any>;

const GATED = {
  id: "user.gated",
  name: "Gated",
  description: "One step per kind of gate.",
  version: "1.0.0",
  assessments: [{
    id: "readiness",
    purpose: "Whether the fix is proven.",
    dimensions: [
      { id: "evidence", purpose: "Backed by runs.", levels: ["gaps", "complete"] },
      { id: "risk", purpose: "How risky.", levels: ["low", "high"], required: false },
    ],
  }],
  steps: [
    {
      id: "reproduce",
      title: "Reproduce",
      prompt: "Reproduce the bug; the next step reads {{ticket}}.",
      requiredContext: ["ticket"],
    },
    {
      id: "ask",
      title: "Ask",
      prompt: "Get the design document for {{ticket}}.",
      userDependencies: [{
        contextKey: "designDoc",
        reason: "user_provided_document",
        message: "The path of the design document.",
      }],
    },
    {
      id: "baseline",
      title: "Baseline",
      prompt: "Record the checks the project runs.",
      validationCriteria: [
        {
          type: "regex",
          pattern: "^Checks: .+",
          flags: "m",
          message: "notes need a `Checks:` line",
        },
        { type: "contains", value: "IN SCOPE" },
        { type: "contains", value: "ROLLBACK", condition: { var: "ticket", equals: "never" } },
      ],
    },
    {
      id: "assess",
      title: "Assess",
      prompt: "Rate the fix.",
      assessmentRefs: ["readiness"],
      assessmentConsequences: [{
        when: { anyEqualsLevel: "gaps" },
        effect: { kind: "require_followup", guidance: "Run the experiment that would refute it." },
      }],
    },
    {
      id: "verdict",
      title: "Verdict",
      prompt: "Give a verdict on {{designDoc}}.",
      outputContract: { contractRef: "wr.contracts.review_verdict" },
    },
  ],
};

async function withServer(fn: (c: TestClient) => Promise<void>): Promise<void> {
  const home = await tempHome();
  await Deno.mkdir(join(home.home, "workflows"), { recursive: true });
  await Deno.writeTextFile(join(home.home, "workflows", "gated.json"), JSON.stringify(GATED));
  const client = await connect(home.home, { client: "v1" });
  try {
    await fn(client);
  } finally {
    await client.close();
    await home.cleanup();
  }
}

Deno.test("pending carries each gate as a field, and the text says the same", async () => {
  await withServer(async (c) => {
    const start = await c.call("start_workflow", { workflowId: "user.gated" });
    const reproduce = ok(start);
    assert.deepEqual(reproduce.pending.requiredContext, ["ticket"]);
    assert.match(start.content[0]!.text, /^context: set `ticket`$/m);
    const ask = ok(
      await c.call("continue_workflow", {
        stateToken: reproduce.stateToken,
        ackToken: reproduce.ackToken,
        context: { ticket: "BUG-7" },
        output: { notesMarkdown: "Reproduced." },
      }),
    );
    assert.deepEqual(ask.pending.userDependencies, [{
      key: "designDoc",
      reason: "user_provided_document",
      message: "The path of the design document.",
    }]);
    const blocked = await c.call("continue_workflow", {
      stateToken: ask.stateToken,
      ackToken: ask.ackToken,
      output: { notesMarkdown: "Asked." },
    });
    assert.equal(ok(blocked).blockers[0].code, "USER_ONLY_DEPENDENCY");
    assert.match(
      blocked.content[0]!.text,
      /^context from the user: `designDoc` \(user_provided_document\): The path/m,
    );
    const baseline = await c.call("continue_workflow", {
      stateToken: ok(blocked).stateToken,
      ackToken: ok(blocked).ackToken,
      context: { designDoc: "docs/design.md" },
      output: { notesMarkdown: "Asked." },
    });
    // the conditional rule does not apply (ticket is not "never"), so it is not announced
    assert.deepEqual(ok(baseline).pending.notesRules, [
      { message: "notes need a `Checks:` line", label: "Checks:" },
      { message: "the notes must mention `IN SCOPE`", contains: "IN SCOPE" },
    ]);
    assert.match(baseline.content[0]!.text, /^notes: a line `Checks: …`; notes need a/m);
    const refused = ok(
      await c.call("continue_workflow", {
        stateToken: ok(baseline).stateToken,
        ackToken: ok(baseline).ackToken,
        output: { notesMarkdown: "Checks: deno task test\nNothing else." },
      }),
    );
    // a failure says what pending announced
    assert.deepEqual(refused.blockers.map((b: Json) => b.message), [
      "Step `baseline`: the notes must mention `IN SCOPE`.",
    ]);
  });
});

Deno.test("an agent that reads only pending's fields passes every gate; a bare acknowledgement is blocked by exactly those", async () => {
  await withServer(async (c) => {
    const walk = await walkWorkflow(c, "user.gated", { variant: 0, probed: new Set() });
    assert.equal(walk.last.isComplete, true);
    assert.deepEqual(walk.steps, ["reproduce", "ask", "baseline", "assess", "verdict"]);
    assert.deepEqual(walk.probes, [
      { stepId: "reproduce", codes: ["MISSING_CONTEXT_KEY", "MISSING_REQUIRED_NOTES"] },
      { stepId: "ask", codes: ["MISSING_REQUIRED_NOTES", "USER_ONLY_DEPENDENCY"] },
      { stepId: "baseline", codes: ["MISSING_REQUIRED_NOTES"] },
      { stepId: "baseline", codes: ["INVALID_REQUIRED_OUTPUT"] },
      { stepId: "assess", codes: ["MISSING_REQUIRED_NOTES", "MISSING_REQUIRED_OUTPUT"] },
      { stepId: "assess", codes: ["ASSESSMENT_FOLLOWUP_REQUIRED"] },
      { stepId: "verdict", codes: ["MISSING_REQUIRED_OUTPUT"] },
    ]);
  });
});
