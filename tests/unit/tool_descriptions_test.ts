/**
 * Tool descriptions must match the schemas: every backticked field a description names exists
 * in that tool's input or output schema. And the facts each definition carries (hints,
 * workspace use) stay what the use-cases do.
 */
import assert from "node:assert/strict";
import { TOOLS, toolSchemas } from "../../tools/mod.ts";
import { deepworkProfile } from "../../tools/profiles/deepwork.ts";
import { createJobSource } from "../../tools/profiles/deepwork/job_folders.ts";

const DEEPWORK = deepworkProfile({ jobs: createJobSource({ dirs: [] }), gate: null }).tools;

/** Every property name anywhere in a JSON Schema. */
function propertyNames(schema: unknown, out = new Set<string>()): Set<string> {
  if (Array.isArray(schema)) schema.forEach((s) => propertyNames(s, out));
  else if (schema && typeof schema === "object") {
    const props = (schema as { properties?: Record<string, unknown> }).properties;
    if (props) Object.keys(props).forEach((k) => out.add(k));
    Object.values(schema).forEach((v) => propertyNames(v, out));
  }
  return out;
}

/** Backticked identifiers in a description (`a.b` counts as its parts). */
function namedFields(description: string): string[] {
  return [...description.matchAll(/`([A-Za-z_][A-Za-z0-9_.]*)`/g)].flatMap((m) => m[1]!.split("."));
}

/** Fields a description names that its schemas lack. */
function unknownFields(description: string, schemas: unknown[]): string[] {
  const known = new Set<string>();
  schemas.forEach((s) => propertyNames(s, known));
  return namedFields(description).filter((f) => !known.has(f));
}

for (const tool of [...TOOLS, ...DEEPWORK]) {
  Deno.test(`${tool.name}${DEEPWORK.includes(tool) ? " (deepwork)" : ""}: its description names only fields of its schemas`, () => {
    const { inputSchema, outputSchema } = toolSchemas(tool);
    assert.ok(namedFields(tool.description).length > 0, "the description names at least one field");
    assert.deepEqual(unknownFields(tool.description, [inputSchema, outputSchema]), []);
  });
}

Deno.test("the check flags a description naming a field the schema lacks", () => {
  const tool = TOOLS.find((t) => t.name === "continue_workflow")!;
  const { inputSchema, outputSchema } = toolSchemas(tool);
  assert.deepEqual(
    unknownFields("Pass `stateToken` and `sessionCursor`.", [inputSchema, outputSchema]),
    [
      "sessionCursor",
    ],
  );
});

Deno.test("every tool publishes object input and output schemas that admit the error envelope", () => {
  for (const tool of [...TOOLS, ...DEEPWORK]) {
    const { inputSchema, outputSchema } = toolSchemas(tool);
    assert.equal(inputSchema.type, "object");
    assert.equal(outputSchema.type, "object");
    assert.ok(
      propertyNames(outputSchema).has("error"),
      `${tool.name} output schema admits {error}`,
    );
  }
});

Deno.test("each tool's hints say what its use-case does", () => {
  const hints = Object.fromEntries(
    TOOLS.map((t) => [t.name, {
      readOnly: t.readOnly,
      idempotent: t.idempotent,
      destructive: t.destructive,
    }]),
  );
  assert.deepEqual(hints, {
    list_workflows: { readOnly: true, idempotent: true, destructive: false },
    inspect_workflow: { readOnly: true, idempotent: true, destructive: false },
    start_workflow: { readOnly: false, idempotent: false, destructive: false },
    continue_workflow: { readOnly: false, idempotent: true, destructive: false },
    checkpoint_workflow: { readOnly: false, idempotent: true, destructive: false },
    resume_session: { readOnly: true, idempotent: true, destructive: false },
    abort_workflow: { readOnly: false, idempotent: true, destructive: true },
    restore_workspace: { readOnly: false, idempotent: true, destructive: true },
    start_session: { readOnly: false, idempotent: false, destructive: false },
  });
  const deepwork = Object.fromEntries(DEEPWORK.map((t) => [t.name, t.destructive]));
  assert.deepEqual(deepwork, {
    get_workflows: false,
    start_workflow: false,
    finished_step: false,
    abort_workflow: true,
    go_to_step: false,
    get_review_instructions: false,
    get_configured_reviews: false,
    mark_review_as_passed: false,
    register_session_job: false,
    get_session_job: false,
    get_named_schemas: false,
  });
  assert.deepEqual(
    TOOLS.filter((t) => t.taskSupport).map((t) => t.name),
    ["start_workflow"],
    "only a start can answer as a task",
  );
});

Deno.test("a call reads the client's workspace only when its use-case records or ranks by it", () => {
  const usesWorkspace = (name: string, args: Record<string, unknown>) => {
    const call = TOOLS.find((t) => t.name === name)!.parse(args);
    assert.ok(call.ok, `${name} accepts ${JSON.stringify(args)}`);
    return call.value.usesWorkspace;
  };
  assert.equal(usesWorkspace("list_workflows", {}), false);
  assert.equal(usesWorkspace("inspect_workflow", { workflowId: "wr.x" }), false);
  assert.equal(usesWorkspace("start_workflow", { workflowId: "wr.x" }), true);
  assert.equal(usesWorkspace("continue_workflow", { stateToken: "s", ackToken: "a" }), true);
  // a rehydrate compares the files with the node's snapshot (docs/snapshots.md)
  assert.equal(usesWorkspace("continue_workflow", { stateToken: "s" }), true, "a rehydrate");
  assert.equal(usesWorkspace("restore_workspace", { stateToken: "s" }), true);
  assert.equal(
    usesWorkspace("checkpoint_workflow", {
      stateToken: "s",
      checkpointToken: "c",
      output: { notesMarkdown: "n" },
    }),
    true,
  );
  assert.equal(usesWorkspace("resume_session", {}), true);
  assert.equal(usesWorkspace("start_session", {}), true);
});

Deno.test("arguments that fail a tool's input schema are INVALID_ARGUMENTS, before any run", () => {
  const call = TOOLS.find((t) => t.name === "list_workflows")!.parse({ x: 1 });
  assert.ok(!call.ok);
  assert.equal(call.error.code, "INVALID_ARGUMENTS");
  assert.deepEqual(call.error.details?.tool, "list_workflows");
});
