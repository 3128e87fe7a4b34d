/**
 * The published output schemas are truthful: every kind of answer of every default tool
 * (success, blocked, rehydrate, fork, replay, completion, gaps, error) validates against the
 * `outputSchema` its `tools/list` gave, as two real validators read it: the v1 SDK client (ajv),
 * which validates each result itself and throws on a mismatch, and @cfworker/json-schema (the
 * v2 client's), against a copy whose objects are closed, so a field a schema forgot fails too.
 * Each schema stands alone: its `$ref`s point into its own `$defs`, and both validators follow
 * them.
 */
import { PARENT_ID, writeDelegationWorkflows } from "../helpers/delegation.ts";
import assert from "node:assert/strict";
import { join } from "node:path";
import { git } from "../helpers/git_repo.ts";
import { Validator } from "@cfworker/json-schema";
import { AjvJsonSchemaValidator } from "npm:@modelcontextprotocol/sdk@1.32.2/validation/ajv-provider.js";
import { type CallResult, connect, ok, tempHome, type TestClient } from "../helpers/server.ts";

type Json = Record<string, unknown>;

const SHAPES = {
  id: "project.shapes",
  name: "Shapes",
  description: "Every part of a step response.",
  version: "1.0.0",
  metaGuidance: ["Keep notes short."],
  capabilities: { delegation: "preferred" },
  steps: [
    { id: "plan", title: "Plan", prompt: "Plan the work." },
    {
      id: "decide",
      title: "Decide",
      prompt: "Review and give a verdict.",
      outputContract: { contractRef: "wr.contracts.review_verdict" },
    },
    {
      id: "each",
      type: "loop",
      title: "Each",
      loop: { type: "for", count: 2, maxIterations: 5 },
      body: [{ id: "round", title: "Round", prompt: "Round {{currentIteration}}." }],
    },
    { id: "finish", title: "Finish", prompt: "Finish." },
  ],
};

/** The schema with every object that lists its properties closed to others. */
function closed(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(closed);
  if (schema === null || typeof schema !== "object") return schema;
  const out = Object.fromEntries(Object.entries(schema).map(([k, v]) => [k, closed(v)]));
  if ("properties" in out && !("additionalProperties" in out)) out.additionalProperties = false;
  return out;
}

/** Every `$ref` anywhere in a schema. */
function refs(schema: unknown, out: string[] = []): string[] {
  if (Array.isArray(schema)) schema.forEach((s) => refs(s, out));
  else if (schema && typeof schema === "object") {
    for (const [k, v] of Object.entries(schema)) {
      if (k === "$ref" && typeof v === "string") out.push(v);
      else refs(v, out);
    }
  }
  return out;
}

/** Calls tools through the v1 client and checks each answer against its listed schema. */
class Checker {
  readonly kinds = new Map<string, Set<string>>();
  constructor(
    readonly client: TestClient,
    readonly schemas: Map<string, Json>,
    readonly workspace: string,
  ) {}

  /** Calls `tool`; the answer must be `kind` and validate (the v1 client has checked it too). */
  async call(tool: string, args: Json, kind: string): Promise<CallResult> {
    const result = await this.client.call(tool, args);
    assert.equal(result.isError === true, kind === "error", `${tool} ${kind}`);
    const strict = new Validator(closed(this.schemas.get(tool)) as never, "2020-12", false);
    const checked = strict.validate(result.structuredContent);
    assert.ok(checked.valid, `${tool} ${kind}: ${JSON.stringify(checked.errors.slice(0, 3))}`);
    this.kinds.set(tool, (this.kinds.get(tool) ?? new Set()).add(kind));
    return result;
  }
}

/** The answers of delegation: a parallel step's children, a blocked parent, a child's start and end. */
async function delegation(c: Checker): Promise<void> {
  const started = ok(await c.call("start_workflow", { workflowId: PARENT_ID }, "ok"));
  const parallel = ok(
    await c.call("continue_workflow", {
      stateToken: started.stateToken,
      ackToken: started.ackToken,
      context: { area: "shapes" },
      output: { notesMarkdown: "Prepared." },
    }, "delegations"),
  );
  assert.equal(parallel.delegations.length, 3);
  const blocked = ok(
    await c.call("continue_workflow", {
      stateToken: parallel.stateToken,
      ackToken: parallel.ackToken,
    }, "blocked"),
  );
  assert.ok(blocked.delegations[0].tip);
  for (const child of parallel.delegations) {
    let at = ok(
      await c.call("start_workflow", { delegationToken: child.delegationToken }, "delegated"),
    );
    while (!at.isComplete) {
      at = ok(
        await c.call("continue_workflow", {
          stateToken: at.stateToken,
          ackToken: at.ackToken,
          output: { notesMarkdown: "Child step done." },
        }, "child"),
      );
    }
    assert.ok(at.delegatedFrom);
  }
  const synthesis = ok(
    await c.call("continue_workflow", {
      stateToken: blocked.stateToken,
      ackToken: blocked.ackToken,
    }, "synthesis"),
  );
  assert.match(synthesis.pending.prompt, /Results of the delegations/);
}

async function run(c: Checker): Promise<void> {
  const bad = { unexpected: 1 };
  for (const tool of c.schemas.keys()) await c.call(tool, bad, "error");
  await c.call("list_workflows", {}, "ok");
  await c.call("inspect_workflow", { workflowId: "project.shapes" }, "ok");
  await c.call("inspect_workflow", { workflowId: "project.nope" }, "error");
  await c.call("start_workflow", { workflowId: "project.nope" }, "error");
  let at = ok(await c.call("start_workflow", { workflowId: "project.shapes" }, "ok"));
  assert.ok(at.metaGuidance && at.capabilities, "the start carries guidance and capabilities");
  const first = at;
  const ack = (step: Json, output: Json, kind = "ok") =>
    c.call(
      "continue_workflow",
      { stateToken: step.stateToken, ackToken: step.ackToken, output },
      kind,
    );
  at = ok(await ack(at, { notesMarkdown: "Planned." }));
  const blocked = ok(await ack(at, { notesMarkdown: "No verdict yet." }, "blocked"));
  assert.equal(blocked.kind, "blocked");
  assert.ok(blocked.blockers.length && blocked.example && blocked.blockedAttempt);
  await ack(at, { notesMarkdown: "No verdict yet." }, "replay");
  at = ok(
    await ack(blocked, {
      notesMarkdown: "Verdict given.",
      artifacts: [blocked.pending.outputContract.example],
    }),
  );
  assert.ok(at.pending.loop, "a step in a loop names it");
  await c.call("checkpoint_workflow", {
    stateToken: at.stateToken,
    checkpointToken: at.checkpointToken,
    output: {},
  }, "error");
  const note = { notesMarkdown: "Halfway through the rounds." };
  const cp = { stateToken: at.stateToken, checkpointToken: at.checkpointToken, output: note };
  ok(await c.call("checkpoint_workflow", cp, "ok"));
  await c.call("checkpoint_workflow", cp, "replay");
  const rehydrated = ok(
    await c.call("continue_workflow", { stateToken: at.stateToken }, "rehydrate"),
  );
  assert.ok(rehydrated.recap.entries.length > 0);
  await Deno.writeTextFile(join(c.workspace, "made_since.txt"), "a file the first node lacks\n");
  const older = ok(await c.call("continue_workflow", { stateToken: first.stateToken }, "tip"));
  assert.ok(older.tip, "rehydrating an older node points at the tip");
  assert.ok(older.workspaceDiffers, "the files differ from the older node's snapshot");
  const restore = older.workspaceDiffers.call.arguments;
  ok(await c.call("restore_workspace", { ...restore, dryRun: true }, "dry"));
  ok(await c.call("restore_workspace", restore, "ok"));
  const fork = ok(await ack(older, { notesMarkdown: "Planned again." }, "forked"));
  assert.ok(fork.forked.downstreamRecap);
  const never = { autonomy: "full_auto_never_stop", riskPolicy: "balanced" };
  const gaps = ok(
    await c.call("continue_workflow", {
      stateToken: fork.stateToken,
      ackToken: fork.ackToken,
      output: { notesMarkdown: "No verdict, moving on." },
      preferences: never,
    }, "gaps"),
  );
  assert.ok(gaps.gaps.length > 0);
  while (!at.isComplete) at = ok(await ack(at, { notesMarkdown: "Done." }));
  assert.equal(at.pending, null);
  await c.call("continue_workflow", { stateToken: at.stateToken, ackToken: "x" }, "error");
  ok(await c.call("resume_session", { query: "Shapes" }, "ok"));
  const other = ok(await c.call("start_workflow", { workflowId: "project.shapes" }, "ok"));
  const abort = { stateToken: other.stateToken, explanation: "Shapes checked." };
  ok(await c.call("abort_workflow", abort, "ok"));
  ok(await c.call("abort_workflow", abort, "again"));
  await ack(other, { notesMarkdown: "Too late." }, "error");
  await delegation(c);
  const session = ok(await c.call("start_session", { title: "Shapes notes" }, "ok"));
  await c.call("checkpoint_workflow", {
    stateToken: session.stateToken,
    checkpointToken: session.checkpointToken,
    output: { notesMarkdown: "A note." },
  }, "ok");
}

Deno.test("every kind of answer of every tool validates against its listed outputSchema, through the v1 client", async () => {
  const home = await tempHome();
  const ws = await Deno.makeTempDir({ prefix: "waymark-shapes-" });
  await Deno.mkdir(join(ws, ".waymark", "workflows"), { recursive: true });
  await Deno.writeTextFile(
    join(ws, ".waymark", "workflows", "shapes.json"),
    JSON.stringify(SHAPES),
  );
  await writeDelegationWorkflows(ws);
  await git(ws, "init", "-q", "-b", "main"); // so answers carry snapshots and restores run
  const client = await connect(home.home, {
    client: "v1",
    cwd: ws,
    env: { WAYMARK_ENABLE_START_SESSION: "1", WAYMARK_SNAPSHOTS: "1" },
  });
  try {
    const { tools } = await client.listTools();
    const schemas = new Map(tools.map((t) => [t.name, t.outputSchema as Json]));
    const c = new Checker(client, schemas, ws);
    await run(c);
    const covered = Object.fromEntries([...c.kinds].map(([t, k]) => [t, [...k].sort()]));
    assert.deepEqual(covered, {
      list_workflows: ["error", "ok"],
      inspect_workflow: ["error", "ok"],
      start_workflow: ["delegated", "error", "ok"],
      continue_workflow: [
        "blocked",
        "child",
        "delegations",
        "error",
        "forked",
        "gaps",
        "ok",
        "rehydrate",
        "replay",
        "synthesis",
        "tip",
      ],
      checkpoint_workflow: ["error", "ok", "replay"],
      resume_session: ["error", "ok"],
      abort_workflow: ["again", "error", "ok"],
      restore_workspace: ["dry", "error", "ok"],
      start_session: ["error", "ok"],
    });
  } finally {
    await client.close();
    await home.cleanup();
    await Deno.remove(ws, { recursive: true });
  }
});

async function refsStayInside(client: TestClient): Promise<void> {
  const { tools } = await client.listTools();
  const schema = tools.find((t) => t.name === "continue_workflow")!.outputSchema as Json;
  const used = refs(schema);
  assert.ok(used.length > 0, "the repeated parts (the recap, a blocker's pointer) are shared");
  const defs = (schema.$defs ?? {}) as Json;
  for (const ref of used) {
    assert.match(ref, /^#\/\$defs\//, "a $ref never leaves its schema");
    assert.ok(ref.slice("#/$defs/".length) in defs, `${ref} is defined`);
  }
  // a recap reached only through a $ref, with an entry that lacks its notes
  const recap = {
    entries: [{ nodeId: "n", kind: "step", stepId: "s" }],
    truncated: false,
    omitted: 0,
    omittedExact: true,
    policy: "most_recent_first",
    budgetBytes: 1,
    usedBytes: 0,
  };
  const answer = ok(
    await client.call("start_workflow", { workflowId: "waymark.code_review" }),
  );
  const good = {
    ...answer,
    recap: { ...recap, entries: [{ ...recap.entries[0], notesMarkdown: "x" }] },
  };
  const wrong = { ...answer, recap };
  const ajv = new AjvJsonSchemaValidator().getValidator(schema);
  assert.equal(ajv(good).valid, true);
  assert.equal(ajv(wrong).valid, false, "ajv follows the $ref");
  const cfworker = new Validator(schema as never, "2020-12", false);
  assert.equal(cfworker.validate(good).valid, true);
  assert.equal(cfworker.validate(wrong).valid, false, "@cfworker/json-schema follows the $ref");
}

async function oldAnswersValidate(client: TestClient): Promise<void> {
  const { tools } = await client.listTools();
  const schema = tools.find((t) => t.name === "continue_workflow")!.outputSchema as Json;
  // the shape every acknowledgement had: the run's facts, false flags and empty warnings
  const recorded = {
    kind: "ok",
    stateToken: "st1_x",
    ackToken: "ack1_x",
    checkpointToken: "chk1_x",
    pending: { stepId: "s", title: "S", prompt: "Do it.", requireConfirmation: false },
    isComplete: false,
    session: { sessionId: "ses_1", runId: "run_1", nodeId: "n" },
    workflow: { id: "user.w", name: "W", hash: "sha256:0" },
    preferences: { autonomy: "guided", riskPolicy: "conservative" },
    warnings: [],
  };
  assert.equal(new AjvJsonSchemaValidator().getValidator(schema)(recorded).valid, true);
  const strict = new Validator(closed(schema) as never, "2020-12", false);
  assert.equal(strict.validate(recorded).valid, true);
}

// One v1 server for the two cases that read the listed schemas (one process start, not two).
Deno.test("the listed continue_workflow schema, through one v1 server", async (t) => {
  const home = await tempHome();
  const client = await connect(home.home, { client: "v1" });
  try {
    await t.step(
      "a schema's $refs stay inside it, and both clients' validators follow them",
      () => refsStayInside(client),
    );
    await t.step(
      "an answer recorded before acknowledgements said only what changed still validates, so its replay does",
      () => oldAnswersValidate(client),
    );
  } finally {
    await client.close();
    await home.cleanup();
  }
});
