/**
 * `tools/list` serves the default tools' JSON Schemas from a file generated from their zod
 * schemas (`deno task schema`), so a server converts nothing at start-up. The file must say
 * exactly what the conversion says: run `deno task schema` when this fails.
 */
import assert from "node:assert/strict";
import { DEFAULT_PROFILE, TOOLS, toolSchemas } from "../../tools/mod.ts";

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
