/**
 * Unfilled placeholders: a prompt placeholder the context does not fill shows as a readable
 * marker, never as raw braces, and the response lists it in `warnings` (`MISSING_PLACEHOLDER`,
 * one per name); given the value, the prompt carries it and the warning goes.
 * @module
 */
import assert from "node:assert/strict";
import { connect, ok, tempHome } from "../helpers/server.ts";

Deno.test("wr.bug_investigation without a ticket shows (not provided: ticket) and warns; with one, neither", async () => {
  const { home, cleanup } = await tempHome();
  const client = await connect(home, { client: "v1" });
  try {
    const bare = ok(await client.call("start_workflow", { workflowId: "wr.bug_investigation" }));
    assert.equal(bare.pending.stepId, "reproduce");
    assert.match(bare.pending.prompt, /if any: \(not provided: ticket\)\)/);
    assert.doesNotMatch(bare.pending.prompt, /\{\{/);
    const missing = bare.warnings.filter((w: { code: string }) => w.code === "MISSING_PLACEHOLDER");
    assert.equal(missing.length, 1);
    assert.match(missing[0].message, /step `reproduce` uses \{\{ticket\}\}/);
    assert.match(missing[0].message, /context/);
    // Rehydrating says the same.
    const again = ok(await client.call("continue_workflow", { stateToken: bare.stateToken }));
    assert.deepEqual(
      again.warnings.filter((w: { code: string }) => w.code === "MISSING_PLACEHOLDER"),
      missing,
    );

    const given = ok(
      await client.call("start_workflow", {
        workflowId: "wr.bug_investigation",
        context: { ticket: "BUG-42" },
      }),
    );
    assert.match(given.pending.prompt, /if any: BUG-42\)/);
    assert.deepEqual(
      given.warnings.filter((w: { code: string }) => w.code === "MISSING_PLACEHOLDER"),
      [],
    );

    const review = ok(await client.call("start_workflow", { workflowId: "wr.code_review" }));
    assert.match(review.pending.prompt, /\(not provided: prUrl\)/);
    assert.deepEqual(
      review.warnings.map((w: { code: string; message: string }) => w.code),
      ["MISSING_PLACEHOLDER"],
    );
  } finally {
    await client.close();
    await cleanup();
  }
});
