/**
 * Context is stored once per change, not copied into every node and node event: the database
 * grows with what changed, not with history × context. A database written before context ids
 * migrates in place and its nodes (context inline) keep working.
 * @module
 */
import assert from "node:assert/strict";
import {
  openWaymark,
  type Result,
  type SqliteStore,
  type StepResponse,
  type Waymark,
} from "../../mod.ts";
import { tempHome } from "../helpers/server.ts";
import { writeProjectWorkflow } from "../helpers/workflows.ts";
import { placeOf } from "../helpers/answers.ts";

const WORKFLOW_ID = "project.context_growth";

function value(result: Result<StepResponse>, what: string): StepResponse {
  if (!result.ok) throw new Error(`${what} failed: ${result.error.code}: ${result.error.message}`);
  return result.value;
}

async function open(home: string, workspace: string): Promise<Waymark> {
  return await openWaymark({ home, dbUrl: `file:${home}/waymark.db`, workspace });
}

/** Bytes the database holds (pages in use), with the WAL folded in. */
async function dbBytes(wm: Waymark): Promise<number> {
  await (wm.store as SqliteStore).client.execute("PRAGMA wal_checkpoint(TRUNCATE)");
  const pages = Number(
    (await (wm.store as SqliteStore).client.execute("PRAGMA page_count")).rows[0]![0],
  );
  const free = Number(
    (await (wm.store as SqliteStore).client.execute("PRAGMA freelist_count")).rows[0]![0],
  );
  const size = Number(
    (await (wm.store as SqliteStore).client.execute("PRAGMA page_size")).rows[0]![0],
  );
  return (pages - free) * size;
}

async function ack(wm: Waymark, at: StepResponse, i: number): Promise<StepResponse> {
  return value(
    await wm.continue({
      stateToken: at.stateToken,
      ackToken: at.ackToken,
      output: { notesMarkdown: `step ${i} done` },
    }),
    `ack ${i}`,
  );
}

Deno.test("a 200 KB context and 8 acks: the database grows with what changed, not with history × context", async () => {
  const { home, cleanup } = await tempHome();
  const workspace = await Deno.makeTempDir({ prefix: "waymark-ctx-ws-" });
  const wm = await open(home, workspace);
  try {
    await writeProjectWorkflow(workspace, { id: WORKFLOW_ID, steps: 12 });
    const blob = "c".repeat(200 * 1024);
    const contextBytes = JSON.stringify({ blob }).length;
    const empty = await dbBytes(wm);
    let at = value(await wm.start({ workflowId: WORKFLOW_ID, context: { blob } }), "start");
    const started = await dbBytes(wm);
    for (let i = 1; i <= 8; i++) at = await ack(wm, at, i);
    const acked = await dbBytes(wm);
    const growth = acked - started;
    console.log(
      `context ${contextBytes} B; start +${started - empty} B; 8 acks +${growth} B (${
        (growth / contextBytes).toFixed(3)
      }× the context)`,
    );
    assert.ok(growth < contextBytes / 4, `8 acks grew the database by ${growth} bytes`);
    // The start holds it twice (the log and its projection), never once per node.
    assert.ok(started - empty < 2.5 * contextBytes, `the start took ${started - empty} bytes`);

    // A change is stored once more; every node still reads its own context.
    at = value(
      await wm.continue({
        stateToken: at.stateToken,
        ackToken: at.ackToken,
        context: { extra: 1 },
        output: { notesMarkdown: "changed" },
      }),
      "ack with a change",
    );
    const changed = await dbBytes(wm);
    assert.ok(changed - acked < 2.5 * contextBytes);
    const runId = placeOf(at).runId.replace(/^run_/, "");
    const node = await wm.store.getNode(runId, placeOf(at).nodeId);
    assert.deepEqual(node?.context, { blob, extra: 1 });
    const parent = await wm.store.getNode(runId, node!.parentId!);
    assert.deepEqual(parent?.context, { blob });
    const rows = await (wm.store as SqliteStore).client.execute(
      "SELECT count(*) AS n FROM contexts WHERE run_id = ?",
      [runId],
    );
    assert.equal(Number(rows.rows[0]!.n), 2, "two distinct contexts, one row each");
  } finally {
    await wm.close();
    await cleanup();
    await Deno.remove(workspace, { recursive: true });
  }
});

Deno.test("a database from before context ids migrates, and its nodes with inline context keep working", async () => {
  const { home, cleanup } = await tempHome();
  const workspace = await Deno.makeTempDir({ prefix: "waymark-ctx-ws-" });
  try {
    await writeProjectWorkflow(workspace, { id: WORKFLOW_ID, steps: 6 });
    let wm = await open(home, workspace);
    const started = value(
      await wm.start({ workflowId: WORKFLOW_ID, context: { ticket: "T-1" } }),
      "start",
    );
    const tip = await ack(wm, started, 1);
    // Turn the file back into the previous schema: context inline in every node row.
    await (wm.store as SqliteStore).client.executeMultiple(`
      UPDATE nodes SET context = (SELECT c.context FROM contexts c
        WHERE c.run_id = nodes.run_id AND c.context_id = nodes.context_id);
      DROP TABLE contexts;
      ALTER TABLE nodes DROP COLUMN context_id;
      DELETE FROM waymark_migrations WHERE name = '0003_context_refs';`);
    await wm.close();

    wm = await open(home, workspace);
    try {
      const runId = placeOf(tip).runId.replace(/^run_/, "");
      const old = await wm.store.getNode(runId, placeOf(tip).nodeId);
      assert.deepEqual(old?.context, { ticket: "T-1" });
      const next = value(
        await wm.continue({
          stateToken: tip.stateToken,
          ackToken: tip.ackToken,
          context: { size: 3 },
          output: { notesMarkdown: "after the migration" },
        }),
        "ack after the migration",
      );
      const node = await wm.store.getNode(runId, placeOf(next).nodeId);
      assert.deepEqual(node?.context, { ticket: "T-1", size: 3 });
      const inline = await (wm.store as SqliteStore).client.execute(
        "SELECT count(*) AS n FROM nodes WHERE context_id IS NULL",
      );
      assert.equal(Number(inline.rows[0]!.n), 2, "old rows stay as they were");
    } finally {
      await wm.close();
    }
  } finally {
    await cleanup();
    await Deno.remove(workspace, { recursive: true });
  }
});
