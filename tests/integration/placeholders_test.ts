/**
 * Unfilled placeholders: a prompt placeholder the context does not fill shows as a readable
 * marker, never as raw braces, and the response lists it in `warnings` (`MISSING_PLACEHOLDER`,
 * one per name); given the value, the prompt carries it and the warning goes. (The bundled
 * workflows guard their optional inputs, so none of them shows a marker: a project file does.)
 * @module
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { connect, ok, tempHome } from "../helpers/server.ts";

const TRIAGE = {
  id: "project.triage",
  name: "Triage",
  description: "Reproduce a reported bug.",
  version: "1.0.0",
  steps: [
    {
      id: "reproduce",
      title: "Reproduce",
      prompt: "Reproduce it (the ticket, if any: {{ticket}}).",
    },
    { id: "close", title: "Close", prompt: "Close {{ticket}} and {{owner}}." },
  ],
};

Deno.test("a placeholder the context leaves empty shows (not provided: name) and warns; given, neither", async () => {
  const { home, cleanup } = await tempHome();
  const dir = join(home, "flows");
  await Deno.mkdir(dir);
  await Deno.writeTextFile(join(dir, "triage.json"), JSON.stringify(TRIAGE));
  const client = await connect(home, { client: "v1", extraArgs: ["--workflows-dir", dir] });
  try {
    const bare = ok(await client.call("start_workflow", { workflowId: "project.triage" }));
    assert.equal(bare.pending.stepId, "reproduce");
    assert.match(bare.pending.prompt, /if any: \(not provided: ticket\)\)/);
    assert.doesNotMatch(bare.pending.prompt, /\{\{/);
    const missing = (bare.warnings ?? []).filter((w: { code: string }) =>
      w.code === "MISSING_PLACEHOLDER"
    );
    assert.equal(missing.length, 1);
    assert.match(missing[0].message, /step `reproduce` uses \{\{ticket\}\}/);
    assert.match(missing[0].message, /context/);
    // Rehydrating says the same.
    const again = ok(await client.call("continue_workflow", { stateToken: bare.stateToken }));
    assert.deepEqual(
      (again.warnings ?? []).filter((w: { code: string }) => w.code === "MISSING_PLACEHOLDER"),
      missing,
    );

    const given = ok(
      await client.call("start_workflow", {
        workflowId: "project.triage",
        context: { ticket: "BUG-42" },
      }),
    );
    assert.match(given.pending.prompt, /if any: BUG-42\)/);
    assert.deepEqual(
      (given.warnings ?? []).filter((w: { code: string }) => w.code === "MISSING_PLACEHOLDER"),
      [],
    );
    // One warning per name at the next step: `owner` is missing, `ticket` is given.
    const next = ok(
      await client.call("continue_workflow", {
        stateToken: given.stateToken,
        ackToken: given.ackToken,
        output: { notesMarkdown: "Reproduced." },
      }),
    );
    assert.match(next.pending.prompt, /Close BUG-42 and \(not provided: owner\)\./);
    assert.deepEqual(
      (next.warnings ?? []).map((w: { code: string }) => w.code),
      ["MISSING_PLACEHOLDER"],
    );
  } finally {
    await client.close();
    await cleanup();
  }
});
