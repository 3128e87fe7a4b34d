/**
 * Bundled workflow files are read without the zod validation other files get (it costs ~10 ms the
 * first time in a process). That is sound only while validation accepts each of them and changes
 * nothing the compiler sees: this test holds both.
 */
import assert from "node:assert/strict";
import {
  compileParsed,
  parseSourceFile,
  readBundledFile,
  routinesAmong,
} from "../../engine/workflow/catalog.ts";
import { parseWorkflowText } from "../../engine/workflow/parse.ts";
import type { WorkflowFile } from "../../engine/workflow/schema.ts";
import { BUNDLED_WORKFLOWS } from "../../workflows/mod.ts";

Deno.test("every bundled file validates, and validation leaves its compiled form and hash alone", async () => {
  assert.ok(BUNDLED_WORKFLOWS.length > 0);
  // the bundled routines, which bundled workflows call
  const routines = routinesAmong(BUNDLED_WORKFLOWS.map((f) => parseSourceFile(f)));
  for (const input of BUNDLED_WORKFLOWS) {
    const validated = parseWorkflowText(input.text, input.file);
    assert.ok(validated.ok, `${input.file}: ${JSON.stringify(!validated.ok && validated.error)}`);
    const compile = (file: WorkflowFile) => compileParsed({ ok: true, input, file }, routines);
    const trusted = await compile(readBundledFile(input).workflow);
    const checked = await compile(validated.workflow);
    assert.ok(trusted.ok && checked.ok, input.file);
    assert.deepStrictEqual(trusted.workflow.compiled, checked.workflow.compiled, input.file);
    assert.equal(trusted.workflow.hash, checked.workflow.hash, input.file);
  }
});
