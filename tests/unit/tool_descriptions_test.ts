/**
 * Tool descriptions must match the schemas: every backticked field a description names exists
 * in that tool's input or output schema.
 */
import assert from "node:assert/strict";
import { TOOLS, toolSchemas } from "../../tools/mod.ts";

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

for (const tool of TOOLS) {
  Deno.test(`${tool.name}: its description names only fields of its schemas`, () => {
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
  for (const tool of TOOLS) {
    const { inputSchema, outputSchema } = toolSchemas(tool);
    assert.equal(inputSchema.type, "object");
    assert.equal(outputSchema.type, "object");
    assert.ok(
      propertyNames(outputSchema).has("error"),
      `${tool.name} output schema admits {error}`,
    );
  }
});
