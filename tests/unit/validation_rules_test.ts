/**
 * Validation rules and conditions: a `schema` rule enforces every JSON Schema keyword (not only
 * `type` and `required`), condition equality ignores key order, and broken rules, loops and
 * assessments are refused at load time with the path and the fix.
 */
import assert from "node:assert/strict";
import { failedValidation } from "../../engine/gates/enforce.ts";
import { evaluateCondition } from "../../engine/workflow/conditions.ts";
import { parseWorkflowText } from "../../engine/workflow/parse.ts";
import type { ValidationCriteria } from "../../engine/workflow/schema.ts";
import { jsonSchemaProblems } from "../../engine/gates/json_schema_check.ts";

const schemaRule = (schema: Record<string, unknown>): ValidationCriteria => ({
  type: "schema",
  schema,
});

function failures(criteria: ValidationCriteria, notes: unknown): string[] {
  return failedValidation(criteria, { notes: JSON.stringify(notes), context: {} });
}

Deno.test("a schema rule enforces keywords beyond type and required, naming where", () => {
  const rule = schemaRule({
    type: "object",
    required: ["verdict"],
    additionalProperties: false,
    properties: {
      verdict: { enum: ["pass", "fail"] },
      summary: { type: "string", minLength: 10 },
      detail: { type: "object", properties: { score: { type: "integer", minimum: 0 } } },
    },
  });
  assert.deepEqual(failures(rule, { verdict: "pass", summary: "all good here" }), []);
  const cases: [unknown, RegExp][] = [
    [{ verdict: "maybe" }, /`verdict`: value does not match any of \["pass","fail"\]/],
    [{ verdict: "pass", summary: "short" }, /`summary`: String is too short \(5 < 10\)$/],
    [{ verdict: "pass", detail: { score: -1 } }, /`detail\.score`: -1 is less than 0/],
    [{ verdict: "pass", extra: 1 }, /"extra".*additional properties/],
  ];
  for (const [notes, expected] of cases) {
    const found = failures(rule, notes);
    assert.equal(found.length, 1, JSON.stringify(notes));
    assert.match(found[0]!, /^the notes must be JSON matching the step's schema: /);
    assert.match(found[0]!, expected);
  }
  assert.match(failedValidation(rule, { notes: "not json", context: {} })[0]!, /not valid JSON/);
});

Deno.test("a schema rule's own message replaces the generated one", () => {
  const rule: ValidationCriteria = {
    type: "schema",
    schema: { type: "array", minItems: 2 },
    message: "list at least two options",
  };
  assert.deepEqual(failures(rule, ["one"]), ["list at least two options"]);
  assert.deepEqual(failures(rule, ["one", "two"]), []);
});

Deno.test("jsonSchemaProblems lists at most `limit` problems, an empty list when valid", () => {
  const schema = { type: "array", items: { type: "string" } };
  assert.deepEqual(jsonSchemaProblems(schema, ["a"]), []);
  assert.equal(jsonSchemaProblems(schema, [1, 2, 3, 4], { limit: 2 }).length, 2);
});

Deno.test("condition equality does not depend on object key order", () => {
  const context = { choice: { b: 2, a: { y: [1, { q: 1, p: 2 }], x: null } } };
  const same = { a: { x: null, y: [1, { p: 2, q: 1 }] }, b: 2 };
  assert.equal(evaluateCondition({ var: "choice", equals: same }, context), true);
  assert.equal(evaluateCondition({ var: "choice", not_equals: same }, context), false);
  assert.equal(evaluateCondition({ var: "choice", in: [1, same] }, context), true);
  assert.equal(
    evaluateCondition({ var: "list", contains: { k: 1, j: 2 } }, { list: [{ j: 2, k: 1 }] }),
    true,
  );
  assert.equal(evaluateCondition({ var: "choice", equals: { b: 2 } }, context), false);
});

function issuesOf(step: Record<string, unknown>, extra: Record<string, unknown> = {}): string[] {
  const text = JSON.stringify({
    id: "user.t",
    name: "T",
    description: "d",
    version: "1",
    ...extra,
    steps: [{ id: "a", title: "A", ...step }],
  });
  const result = parseWorkflowText(text, "t.json");
  return result.ok ? [] : result.error.issues.map((i) => `${i.path}: ${i.message}`);
}

Deno.test("broken validation rules are refused with the path and the fix", () => {
  const found = (validationCriteria: unknown) => issuesOf({ prompt: "p", validationCriteria });
  assert.deepEqual(found({ type: "contains" }), [
    "steps[0].validationCriteria.value: missing required string: add it",
  ]);
  assert.match(found([{ type: "regex", pattern: "(" }])[0]!, /\[0\]\.pattern: invalid regex/);
  assert.deepEqual(found({ and: [{ type: "length" }] }), [
    "steps[0].validationCriteria.and[0]: a `length` rule needs `min` and/or `max`",
  ]);
  assert.deepEqual(found({ type: "size" }), [
    "steps[0].validationCriteria.type: use one of `contains`, `regex`, `length`, `schema`",
  ]);
});

Deno.test("regex rules use linear-time syntax: lookahead and backreferences are refused at load, with why", () => {
  const found = (pattern: string, flags?: string) =>
    issuesOf({ prompt: "p", validationCriteria: { type: "regex", pattern, flags } });
  assert.match(found("^(?=.*done)")[0]!, /pattern: invalid regex: lookahead .*linear time/);
  assert.match(found("(a)\\1")[0]!, /pattern: invalid regex: backreferences .*linear time/);
  assert.match(found("a", "q")[0]!, /pattern: invalid regex: invalid flags `q`/);
  assert.deepEqual(found("^(a+)+$"), []);
  assert.deepEqual(found("(?<=status: )done", "i"), []);
});

Deno.test("a regex rule is evaluated in linear time where the notes are tested, flags as in JavaScript", () => {
  const rule = (pattern: string, flags?: string): ValidationCriteria => ({
    type: "regex",
    pattern,
    ...(flags === undefined ? {} : { flags }),
  });
  const fails = (criteria: ValidationCriteria, notes: string) =>
    failedValidation(criteria, { notes, context: {} });
  // As an imported snapshot may carry them: never checked by a loader. (The near-miss that
  // freezes a backtracking engine is in tests/integration/hostile_regex_test.ts, with deadlines.)
  assert.deepEqual(fails(rule("^(a+)+$"), "a".repeat(50_000)), []);
  assert.match(
    fails(rule("(?=x)"), "x")[0]!,
    /the step's pattern \/\(\?=x\)\/ cannot be evaluated \(lookahead.*the workflow must be fixed/,
  );
  assert.deepEqual(fails(rule("^DONE$", "im"), "first\ndone\nlast"), []);
  assert.equal(fails(rule("^DONE$", "m"), "first\ndone").length, 1);
  assert.deepEqual(fails(rule("a.b", "s"), "a\nb"), []);
  assert.equal(fails(rule("b", "y"), "ab").length, 1, "`y` anchors at the start");
  assert.deepEqual(fails(rule("\\u00e9t\\u00e9"), "un été"), []);
});

Deno.test("each loop type requires its own fields", () => {
  const loop = (config: Record<string, unknown>) =>
    issuesOf({ type: "loop", loop: { maxIterations: 3, ...config }, body: "a" });
  assert.deepEqual(loop({ type: "for" }), [
    "steps[0].loop.count: missing required number: add it",
  ]);
  assert.deepEqual(loop({ type: "forEach" }), [
    "steps[0].loop.items: missing required string: add it",
  ]);
  assert.deepEqual(loop({ type: "until" }), [
    "steps[0].loop: a `until` loop needs `condition` or `conditionSource`",
  ]);
  assert.deepEqual(loop({ type: "repeat" }), [
    "steps[0].loop.type: use one of `while`, `until`, `for`, `forEach`",
  ]);
});

Deno.test("assessments and their consequences are typed", () => {
  const assessments = [{
    id: "gate",
    purpose: "Is it ready?",
    dimensions: [{ id: "confidence", purpose: "How sure", levels: ["low", "high"] }],
  }];
  const step = {
    prompt: "p",
    assessmentRefs: ["gate"],
    assessmentConsequences: [{
      when: { anyEqualsLevel: "low" },
      effect: { kind: "require_followup", guidance: "Gather more evidence." },
    }],
  };
  assert.deepEqual(issuesOf(step, { assessments }), []);
  const repeated = [{
    ...assessments[0],
    dimensions: [{ id: "c", purpose: "p", levels: ["low", "low"] }],
  }];
  assert.deepEqual(issuesOf(step, { assessments: repeated }), [
    "assessments[0].dimensions[0].levels: the levels of a dimension must be distinct",
  ]);
  const badEffect = {
    ...step,
    assessmentConsequences: [{ when: { anyEqualsLevel: "low" }, effect: { kind: "block" } }],
  };
  const found = issuesOf(badEffect, { assessments });
  assert.ok(found.some((i) => i.startsWith("steps[0].assessmentConsequences[0].effect.kind")));
});
