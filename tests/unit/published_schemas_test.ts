/**
 * `tools/list` serves the default tools' JSON Schemas, and the early server (`waymark serve`
 * before the engine loads) the whole default profile, from a file generated from the zod
 * schemas and the tool definitions (`deno task schema`), so a server converts nothing at
 * start-up. The file must say exactly what the conversion says: run `deno task schema` when
 * this fails.
 */
import assert from "node:assert/strict";
import { DEFAULT_PROFILE, TOOLS, toolSchemas } from "../../tools/mod.ts";
import { DEFAULT_LISTING } from "../../tools/early_server.ts";
import { publishProfile } from "../../tools/publish.ts";

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

Deno.test("the default listing is the default profile as published: instructions, every tool, flags", () => {
  assert.deepStrictEqual(
    DEFAULT_LISTING,
    JSON.parse(JSON.stringify(publishProfile(DEFAULT_PROFILE))),
    "deno task schema",
  );
});
