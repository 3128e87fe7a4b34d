/**
 * Fan-out is bounded: a parallel step whose delegations open, nested, more runs than one call may
 * open is refused clearly and as not retryable (never `INTERNAL_ERROR` with "retry now"), and
 * `workflows validate` says so before any run starts.
 * @module
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { LIMITS } from "../../engine/model/limits.ts";
import { runCli } from "../helpers/maintenance.ts";
import { connect, err, ok, tempHome } from "../helpers/server.ts";

/** A workflow whose first step delegates `fan` times to `target` (itself by default). */
function fanout(id: string, fan: number, target = id): string {
  return JSON.stringify({
    id,
    name: id,
    description: "Fans out to itself.",
    version: "1",
    steps: [{
      id: "spread",
      type: "parallel",
      title: "Spread",
      parallelDelegations: Array.from({ length: fan }, (_, i) => ({
        workflowId: target,
        goal: `Part ${i}`,
      })),
    }, { id: "end", title: "End", prompt: "Finish." }],
  });
}

async function workspaceWith(files: Record<string, string>): Promise<string> {
  const ws = await Deno.makeTempDir({ prefix: "waymark-fanout-" });
  const dir = join(ws, ".waymark", "workflows");
  await Deno.mkdir(dir, { recursive: true });
  for (const [name, text] of Object.entries(files)) await Deno.writeTextFile(join(dir, name), text);
  return ws;
}

Deno.test("a self-delegating parallel step of 16 is refused as not retryable, naming the bound; a small one opens", async () => {
  const { home, cleanup } = await tempHome();
  const ws = await workspaceWith({
    "wide.json": fanout("project.wide", LIMITS.delegations),
    "narrow.json": fanout("project.narrow", 2),
  });
  const client = await connect(home, { extraArgs: ["--workspace", ws] });
  try {
    const refused = err(await client.call("start_workflow", { workflowId: "project.wide" }));
    assert.notEqual(refused.code, "INTERNAL_ERROR", refused.message);
    assert.equal(refused.retry.kind, "not_retryable");
    assert.match(
      refused.message,
      new RegExp(`${LIMITS.runsOpenedAtOnce}`),
    );
    assert.match(refused.message, /spread/);
    const again = err(await client.call("start_workflow", { workflowId: "project.wide" }));
    assert.equal(again.code, refused.code, "the same call fails the same way");
    // 2 + 4 + 8 runs: nested three levels, within the bound
    const narrow = ok(await client.call("start_workflow", { workflowId: "project.narrow" }));
    assert.equal(narrow.delegations.length, 2);
    const child = ok(
      await client.call("start_workflow", {
        delegationToken: narrow.delegations[0].delegationToken,
      }),
    );
    assert.equal(child.delegations.length, 2, "nested children open with their parent");
  } finally {
    await client.close();
    await cleanup();
    await Deno.remove(ws, { recursive: true });
  }
});

Deno.test("workflows validate states the bound for a fan-out past it, and passes one within it without warning that it delegates to itself", async () => {
  const ws = await workspaceWith({
    "wide.json": fanout("project.wide", LIMITS.delegations),
    "narrow.json": fanout("project.narrow", 2),
  });
  const run = async (file: string) => {
    const ran = await runCli(["workflows", "validate", file]);
    return { code: ran.code, text: ran.out + ran.err };
  };
  try {
    const dir = join(ws, ".waymark", "workflows");
    const wide = await run(join(dir, "wide.json"));
    assert.notEqual(wide.code, 0, wide.text);
    assert.match(
      wide.text,
      new RegExp(`${LIMITS.runsOpenedAtOnce}`),
    );
    assert.match(wide.text, /spread/);
    const narrow = await run(join(dir, "narrow.json"));
    assert.equal(narrow.code, 0, narrow.text);
    assert.doesNotMatch(narrow.text, /DELEGATION_UNAVAILABLE/);
  } finally {
    await Deno.remove(ws, { recursive: true });
  }
});
