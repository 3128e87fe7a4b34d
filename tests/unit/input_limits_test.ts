import assert from "node:assert/strict";
import { checkContext, checkOutput, jsonDepth, LIMITS } from "../../engine/model/limits.ts";
import { screenArguments } from "../../tools/calls/argument_guard.ts";

function nested(depth: number): unknown {
  let value: unknown = "leaf";
  for (let i = 0; i < depth; i++) value = { a: value };
  return value;
}

Deno.test("limits: depth is counted without recursion, even 100,000 levels deep", () => {
  assert.equal(jsonDepth("x"), 0);
  assert.equal(jsonDepth({}), 1);
  assert.equal(jsonDepth([[1]]), 2);
  assert.ok(jsonDepth(nested(100_000)) > LIMITS.depth);
});

Deno.test("limits: context over the depth or byte budget is refused with context_budget_exceeded", () => {
  assert.ok(checkContext(nested(LIMITS.depth)).ok);
  const deep = checkContext(nested(6_000));
  assert.ok(!deep.ok);
  assert.equal(deep.error.details?.reason, "context_budget_exceeded");
  assert.deepEqual(deep.error.retry, { kind: "not_retryable" });
  const big = checkContext({ blob: "x".repeat(LIMITS.contextBytes) });
  assert.ok(!big.ok);
  assert.equal(big.error.details?.maxBytes, LIMITS.contextBytes);
  assert.ok((big.error.details?.bytes as number) > LIMITS.contextBytes);
});

Deno.test("limits: notes, artifact size and artifact count each have a cap that names itself", () => {
  assert.ok(checkOutput({ notesMarkdown: "ok", artifacts: [{ kind: "x" }] }).ok);
  const notes = checkOutput({ notesMarkdown: "n".repeat(LIMITS.notesBytes + 1) });
  assert.ok(!notes.ok);
  assert.equal(notes.error.details?.field, "output.notesMarkdown");
  const one = checkOutput({ artifacts: [{ kind: "x", body: "b".repeat(LIMITS.artifactBytes) }] });
  assert.ok(!one.ok);
  assert.equal(one.error.details?.field, "output.artifacts[0]");
  const many = checkOutput({
    artifacts: Array.from({ length: LIMITS.artifactCount + 1 }, () => ({})),
  });
  assert.ok(!many.ok);
  assert.equal(many.error.details?.reason, "too_many_artifacts");
});

Deno.test("argument guard: NUL anywhere is refused with its path; __proto__ only where keys are data", () => {
  const nul = screenArguments("start_workflow", { workflowId: "wr.x", goal: "before\u0000after" });
  assert.equal(nul?.code, "INVALID_ARGUMENTS");
  assert.deepEqual(nul?.details?.path, ["goal"]);
  assert.equal(nul?.details?.reason, "nul_character");
  const inContext = screenArguments("start_workflow", { context: { k: ["a\u0000"] } });
  assert.deepEqual(inContext?.details?.path, ["context", "k", "0"]);

  const proto = screenArguments(
    "start_workflow",
    JSON.parse('{"workflowId":"wr.x","__proto__":{}}'),
  );
  assert.equal(proto?.details?.reason, "unknown_key");
  assert.equal(screenArguments("start_workflow", JSON.parse('{"context":{"__proto__":1}}')), null);
  assert.equal(
    screenArguments("continue_workflow", JSON.parse('{"output":{"artifacts":[{"__proto__":1}]}}')),
    null,
  );
  const deep = screenArguments("start_workflow", { context: nested(6_000) });
  assert.equal(deep?.details?.reason, "context_budget_exceeded");
  assert.equal(screenArguments("list_workflows", {}), null);
});
