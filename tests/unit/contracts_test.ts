/**
 * Contract packs: a closed set with real schemas; each example passes its own schema, typical
 * mistakes fail it, and blocker texts are cut to their byte bounds on character boundaries.
 */
import assert from "node:assert/strict";
import { CONTRACT_PACKS, packJsonSchema } from "../../engine/gates/contracts.ts";
import { normalizeBlockers, truncateBytes } from "../../engine/gates/enforce.ts";

Deno.test("every contract pack's example passes its schema and its JSON Schema is generated", () => {
  const ids = [...CONTRACT_PACKS.keys()].sort();
  for (
    const needed of [
      "wr.contracts.capability_observation",
      "wr.contracts.coding_handoff",
      "wr.contracts.differentiation_handoff",
      "wr.contracts.discovery_handoff",
      "wr.contracts.gaps",
      "wr.contracts.gate_verdict",
      "wr.contracts.loop_control",
      "wr.contracts.review_verdict",
      "wr.contracts.shaping_handoff",
      "wr.contracts.workflow_divergence",
    ]
  ) assert.ok(ids.includes(needed), needed);
  for (const p of CONTRACT_PACKS.values()) {
    assert.ok(p.schema.safeParse(p.example).success, p.id);
    assert.equal(p.example.kind, p.artifactKind);
    assert.equal(packJsonSchema(p).type, "object");
  }
});

Deno.test("typical mistakes fail their pack", () => {
  const bad: [string, Record<string, unknown>][] = [
    ["wr.contracts.loop_control", { kind: "wr.loop_control", decision: "maybe" }],
    ["wr.contracts.loop_control", { kind: "wr.loop_control" }],
    ["wr.contracts.review_verdict", {
      kind: "wr.review_verdict",
      verdict: "clean",
      confidence: "high",
      summary: "x",
    }],
    ["wr.contracts.gate_verdict", {
      kind: "wr.gate_verdict",
      verdict: "approved",
      confidence: "high",
      rationale: "short",
    }],
    ["wr.contracts.capability_observation", {
      kind: "wr.capability_observation",
      capability: "teleport",
      status: "available",
    }],
    ["wr.contracts.workflow_divergence", {
      kind: "wr.workflow_divergence",
      reason: "whim",
      summary: "x",
    }],
    ["wr.contracts.gaps", { kind: "wr.gaps", gaps: [] }],
    ["wr.contracts.coding_handoff", { kind: "wr.coding_handoff" }],
    ["wr.contracts.differentiation_handoff", {
      kind: "wr.differentiation_handoff",
      shapingHandoff: { rawIdea: "x" },
    }],
    ["wr.contracts.discovery_handoff", {
      kind: "wr.discovery_handoff",
      selectedDirection: "x",
      confidenceBand: "sure",
    }],
    ["wr.contracts.shaping_handoff", { kind: "wr.shaping_handoff" }],
  ];
  for (const [id, artifact] of bad) {
    assert.equal(
      CONTRACT_PACKS.get(id)!.schema.safeParse(artifact).success,
      false,
      `${id}: ${JSON.stringify(artifact)}`,
    );
  }
});

Deno.test("blocker texts are bounded in UTF-8 bytes without splitting a character", () => {
  const cut = truncateBytes("é".repeat(600), 512);
  assert.ok(new TextEncoder().encode(cut).length <= 512);
  assert.ok(cut.endsWith("…"));
  assert.ok(!cut.includes("\uFFFD"));
  assert.equal(truncateBytes("short", 512), "short");
  const blockers = normalizeBlockers([
    { code: "USER_ONLY_DEPENDENCY", pointer: { kind: "context_key", key: "b" }, message: "m" },
    {
      code: "MISSING_REQUIRED_OUTPUT",
      pointer: { kind: "workflow_step", stepId: "s" },
      message: "m",
    },
    {
      code: "MISSING_REQUIRED_OUTPUT",
      pointer: { kind: "output_contract", contractRef: "c" },
      message: "m",
    },
    { code: "USER_ONLY_DEPENDENCY", pointer: { kind: "context_key", key: "a" }, message: "m" },
    { code: "USER_ONLY_DEPENDENCY", pointer: { kind: "context_key", key: "a" }, message: "m" },
  ]);
  assert.deepEqual(
    blockers.map((b) => `${b.code}/${b.pointer.kind}`),
    [
      "MISSING_REQUIRED_OUTPUT/output_contract",
      "MISSING_REQUIRED_OUTPUT/workflow_step",
      "USER_ONLY_DEPENDENCY/context_key",
      "USER_ONLY_DEPENDENCY/context_key",
    ],
  );
});
