/**
 * The start-up rehearsal (`tools/server/rehearsal.ts`): a fresh `waymark serve` runs it before the
 * messages held at start-up are answered, and it writes no session data (only the workflow
 * cache, with the one bundled workflow it finds); a client's first call then works as ever. A
 * client that calls before waymark has opened is not made to wait for it, and a rehearsal that
 * fails (a table gone) is one line on its log, never a failure.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { connectRich, dbUrlOf, ok, tempHome } from "../helpers/server.ts";
import { onRawServer } from "../helpers/raw_server.ts";
import { withTestDb } from "../helpers/db.ts";
import { openWaymark } from "../../mod.ts";
import { REHEARSED_WORKFLOW } from "../../tools/server/rehearsal.ts";

/** The session data a database holds, by table. */
function sessionRows(home: string): Promise<Record<string, number>> {
  return withTestDb(dbUrlOf(home), async (db) => ({
    sessions: await db.number("SELECT count(*) FROM sessions"),
    runs: await db.number("SELECT count(*) FROM runs"),
    events: await db.number("SELECT count(*) FROM events"),
    nodes: await db.number("SELECT count(*) FROM nodes"),
  }));
}

/** How many compiled outcomes the workflow cache holds for the rehearsed workflow. */
function rehearsedOutcomes(home: string): Promise<number> {
  return withTestDb(
    dbUrlOf(home),
    (db) =>
      db.number("SELECT count(*) FROM workflow_outcomes WHERE summary LIKE ?", [
        `%"${REHEARSED_WORKFLOW}"%`,
      ]),
  );
}

const NONE = { sessions: 0, runs: 0, events: 0, nodes: 0 };

Deno.test("a fresh serve rehearses before the held messages are answered, and writes no session data", async () => {
  const { home, cleanup } = await tempHome();
  try {
    const client = await connectRich(home);
    try {
      await client.listTools();
      // held until waymark has opened, its handlers are composed and the rehearsal is over
      await client.client.listResources();
      assert.equal(await rehearsedOutcomes(home), 1, "the rehearsal found its workflow");
      assert.deepEqual(await sessionRows(home), NONE);
      const started = ok(
        await client.call("start_workflow", { workflowId: "waymark.code_review" }),
      );
      assert.ok(started.pending.stepId.length > 0);
      assert.equal((await sessionRows(home)).sessions, 1);
    } finally {
      await client.close();
    }
  } finally {
    await cleanup();
  }
});

Deno.test("a client that calls before waymark has opened does not wait for the rehearsal", async () => {
  await onRawServer(async ({ server, home }) => {
    await server.handshake("rehearsal-test");
    await server.send({ jsonrpc: "2.0", id: 2, method: "tools/list", params: {} });
    const call = { name: "start_workflow", arguments: { workflowId: "waymark.code_review" } };
    await server.send({ jsonrpc: "2.0", id: 3, method: "tools/call", params: call });
    const started = (await server.answer(3)).result;
    assert.equal(started.isError, undefined, JSON.stringify(started.content));
    // the rehearsal ended before its first part: it found nothing
    assert.equal(await rehearsedOutcomes(home), 0);
    assert.equal((await server.close()).code, 0);
  }, { blank: true });
});

Deno.test("a rehearsal that fails is one line on its log and resolves", async () => {
  const dir = await Deno.makeTempDir({ prefix: "waymark-rehearsal-" });
  const dbUrl = `file:${join(dir, "waymark.db")}`;
  const waymark = await openWaymark({ home: dir, dbUrl });
  try {
    // a table the store's queries read is gone: preparing them fails
    await withTestDb(dbUrl, (db) => db.run("DROP TABLE node_events"));
    const lines: string[] = [];
    // a budget no loaded machine runs out of: this is about the failure, not the budget
    await waymark.rehearse({ log: (line) => lines.push(line), budgetMs: 60_000 });
    assert.equal(lines.length, 1, lines.join("\n"));
    assert.match(lines[0]!, /^start-up rehearsal ended early: .*no such table: node_events/);
  } finally {
    await waymark.close();
    await Deno.remove(dir, { recursive: true });
  }
});
