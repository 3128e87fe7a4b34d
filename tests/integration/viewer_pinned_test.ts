/**
 * The viewer reads pinned workflows the way the engine does: a run pinned to a format-1
 * snapshot (flat steps, no kinds, v1 states) runs, and its page shows the pending step.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { hashJson } from "../../engine/common/hash.ts";
import { openWaymark, type Result, type SqliteStore, type StepResponse } from "../../mod.ts";
import { createViewerApp } from "../../web/mod.ts";
import { tempHome } from "../helpers/server.ts";

const HOST = "127.0.0.1:4321";

function value(result: Result<StepResponse>): StepResponse {
  if (!result.ok) throw new Error(`${result.error.code}: ${result.error.message}`);
  return result.value;
}

/** The format-1 form of a flat compiled workflow: no step kinds, no capabilities or contracts. */
function formatOne(compiled: Record<string, unknown>): Record<string, unknown> {
  const { capabilities: _c, features: _f, contracts: _k, kind: _w, ...rest } = compiled;
  const steps = (compiled.steps as Record<string, unknown>[]).map(({ kind: _s, ...s }) => s);
  return { ...rest, format: 1, steps };
}

Deno.test("a run pinned to a format-1 snapshot runs, and the viewer shows its pending step", async () => {
  const { home, cleanup } = await tempHome();
  const workspace = await Deno.makeTempDir();
  await Deno.mkdir(join(workspace, ".waymark", "workflows"), { recursive: true });
  await Deno.writeTextFile(
    join(workspace, ".waymark", "workflows", "flat.json"),
    JSON.stringify({
      id: "project.flat",
      name: "Flat",
      description: "Two plain steps.",
      version: "1.0.0",
      steps: [
        { id: "one", title: "Step one", prompt: "Do the first thing." },
        { id: "two", title: "Step two", prompt: "Do the second thing." },
      ],
    }),
  );
  const waymark = await openWaymark({ home, workspace });
  const viewer = createViewerApp({ db: waymark.store.db, allowedHosts: () => [HOST] });
  let closed = false;
  try {
    const start = value(await waymark.start({ workflowId: "project.flat" }));
    const hash = start.workflow!.hash;
    const stored = await waymark.store.db.selectFrom("workflow_snapshots").select("compiled")
      .where("workflow_hash", "=", hash).executeTakeFirstOrThrow();
    // Pin the run to the snapshot and states a format-1 server stored (under their own hash).
    const old = formatOne(JSON.parse(stored.compiled));
    const oldHash = await hashJson(old);
    await (waymark.store as SqliteStore).client.execute({
      sql: "INSERT INTO workflow_snapshots SELECT ?, workflow_id, ?, created_at " +
        "FROM workflow_snapshots WHERE workflow_hash = ?",
      args: [oldHash, JSON.stringify(old), hash],
    });
    await (waymark.store as SqliteStore).client.execute({
      sql: "UPDATE runs SET workflow_hash = ? WHERE workflow_hash = ?",
      args: [oldHash, hash],
    });
    await (waymark.store as SqliteStore).client.execute(
      `UPDATE nodes SET state = json_object('v', 1, 'pc', json_extract(state, '$.pc'))`,
    );
    const { sessionId, runId } = start.session!;
    const page = await viewer.app.request(`/sessions/${sessionId}/runs/${runId}`, {
      headers: { host: HOST },
    });
    assert.equal(page.status, 200);
    const html = await page.text();
    assert.match(html, /Do the first thing\./);
    assert.doesNotMatch(html, /snapshot is missing/);

    // A fresh process reads the old snapshot too (the store's cache is per process).
    viewer.close();
    await waymark.close();
    closed = true;
    const again = await openWaymark({ home, workspace });
    const second = createViewerApp({ db: again.store.db, allowedHosts: () => [HOST] });
    try {
      const next = value(
        await again.continue({
          stateToken: start.stateToken,
          ackToken: start.ackToken,
          output: { notesMarkdown: "First thing done." },
        }),
      );
      assert.equal(next.pending?.prompt, "Do the second thing.");
      const graph = await second.app.request(`/api/sessions/${sessionId}/runs/${runId}/graph`, {
        headers: { host: HOST },
      });
      const body = await graph.json();
      assert.equal(body.workflow.stepCount, 2);
      assert.ok(
        body.nodes.some((n: { label: { title: string } }) => n.label.title === "Step one"),
        "the acknowledged step is labelled with its title",
      );
    } finally {
      second.close();
      await again.close();
    }
  } finally {
    if (!closed) {
      viewer.close();
      await waymark.close();
    }
    await cleanup();
    await Deno.remove(workspace, { recursive: true }).catch(() => {});
  }
});
