/**
 * `tools/list` serves each profile's JSON Schemas, and the early server (`waymark serve` before
 * the engine loads) each whole profile, from a file per profile generated from the zod schemas
 * and the tool definitions (`deno task schema`), so a server converts nothing at start-up. The file must say exactly what the conversion says: run `deno task schema` when
 * this fails.
 */
import assert from "node:assert/strict";
import { DEFAULT_PROFILE, TOOLS, toolSchemas } from "../../tools/mod.ts";
import { PROFILE_NAMES, PROFILES } from "../../tools/profiles/registry.ts";
import { PROFILE_TOOLS, type ProfileInputs } from "../../tools/profiles/tools.ts";
import { publishProfile } from "../../tools/calls/publish.ts";

Deno.test("the published tool schemas are the zod schemas' conversion, for every default tool", () => {
  const published = DEFAULT_PROFILE.published ?? {};
  assert.deepEqual(Object.keys(published).sort(), TOOLS.map((t) => t.name).sort());
  for (const tool of TOOLS) {
    assert.deepStrictEqual(
      published[tool.name],
      toolSchemas(tool),
      `${tool.name}: deno task schema`,
    );
  }
});

const inputs: ProfileInputs = {
  jobs: { load: () => Promise.resolve({ jobs: [], errors: [] }) },
  gate: () => null,
};

for (const name of PROFILE_NAMES) {
  Deno.test(`the ${name} listing is the ${name} profile as published: name, instructions, every tool, flags`, () => {
    const profile = PROFILE_TOOLS[name](inputs);
    assert.deepStrictEqual(
      PROFILES[name],
      JSON.parse(JSON.stringify(publishProfile(profile))),
      "deno task schema",
    );
    // tools/list of the composed server converts nothing either
    assert.deepStrictEqual(
      profile.published,
      Object.fromEntries(profile.tools.map((tool) => [tool.name, toolSchemas(tool)])),
    );
  });
}

/** Every subschema's text in a schema, with how often it appears. */
function repeats(schema: unknown, seen = new Map<string, number>()): Map<string, number> {
  if (Array.isArray(schema)) schema.forEach((s) => repeats(s, seen));
  else if (schema && typeof schema === "object") {
    const text = JSON.stringify(schema);
    seen.set(text, (seen.get(text) ?? 0) + 1);
    Object.values(schema).forEach((s) => repeats(s, seen));
  }
  return seen;
}

Deno.test("an output schema says each shape once and only the shape: no prose, no repeated part", () => {
  for (const tool of TOOLS) {
    const { outputSchema } = toolSchemas(tool);
    const prose = [...repeats(outputSchema).keys()].filter((t) => /"description":"/.test(t));
    assert.deepEqual(prose, [], `${tool.name}: no descriptions`);
    const twice = [...repeats(outputSchema)].filter(([t, n]) => n > 1 && t.length >= 100);
    assert.deepEqual(twice.map(([t]) => t.slice(0, 60)), [], `${tool.name}: shared in $defs`);
  }
});

Deno.test("start and checkpoint publish only the fields they answer; continue all of them", () => {
  const fields = (name: string) => {
    const schema = toolSchemas(TOOLS.find((t) => t.name === name)!).outputSchema;
    const success = (schema.anyOf as { properties: Record<string, unknown> }[])[0]!;
    return Object.keys(success.properties);
  };
  const blocked = ["blockers", "example", "blockedAttempt", "gaps", "forked", "recap", "tip"];
  for (const name of ["start_workflow", "checkpoint_workflow", "start_session"]) {
    // taking up a child run (a delegationToken) answers with the child's recap
    const allowed = name === "start_workflow" ? ["recap"] : [];
    const extra = fields(name).filter((f) => blocked.includes(f) && !allowed.includes(f));
    assert.deepEqual(extra, [], name);
    if (name !== "start_workflow") assert.ok(!fields(name).includes("recap"), name);
  }
  assert.ok(fields("start_workflow").includes("metaGuidance"));
  assert.ok(fields("start_workflow").includes("recap"));
  assert.ok(fields("checkpoint_workflow").includes("checkpoint"));
  assert.deepEqual(blocked.filter((f) => !fields("continue_workflow").includes(f)), []);
});
