/**
 * Broken disks: a full disk, a read-only database and damaged pages each come back as their own
 * storage error with the retry that fits (never `INTERNAL_ERROR` with "retry now"), write
 * nothing, and a damaged page marks the session, sends a `waymark.health` log message, names
 * `waymark doctor`, and stops the process writing to that file until it restarts.
 * @module
 */
import assert from "node:assert/strict";
import { createClient } from "@libsql/client";
import {
  openWaymark,
  type Result,
  type SqliteStore,
  type StepResponse,
  type Waymark,
} from "../../mod.ts";
import { connectRich, err, ok, tempHome } from "../helpers/server.ts";

function open(home: string): Promise<Waymark> {
  return openWaymark({ home, dbUrl: `file:${home}/waymark.db`, workspace: home });
}

function value(result: Result<StepResponse>, what: string): StepResponse {
  if (!result.ok) throw new Error(`${what} failed: ${result.error.code}: ${result.error.message}`);
  return result.value;
}

/**
 * Runs a per-connection PRAGMA on every connection: the store's own (its statement-caching
 * native ones) and every pooled connection of its client, which lends its idle connections
 * out in turn, so all of them must carry it.
 */
async function pragmaEverywhere(wm: Waymark, pragma: string): Promise<void> {
  const store = wm.store as SqliteStore;
  store.pragmaEverywhere(pragma);
  await Promise.all(Array.from({ length: 25 }, () => store.client.execute(pragma)));
}

async function eventCount(wm: Waymark): Promise<number> {
  return Number(
    (await (wm.store as SqliteStore).client.execute("SELECT count(*) AS n FROM events")).rows[0]!.n,
  );
}

Deno.test("a full disk is STORAGE_FULL, retryable later, naming the database file; nothing is recorded", async () => {
  const { home, dbFile, cleanup } = await tempHome();
  const wm = await open(home);
  try {
    const started = value(await wm.start({ workflowId: "waymark.bug_investigation" }), "start");
    const before = await eventCount(wm);
    const pages = Number(
      (await (wm.store as SqliteStore).client.execute("PRAGMA page_count")).rows[0]![0],
    );
    await pragmaEverywhere(wm, `PRAGMA max_page_count = ${pages}`);
    const ack = {
      stateToken: started.stateToken,
      ackToken: started.ackToken,
      output: { notesMarkdown: "n".repeat(60_000) },
    };
    const full = await wm.continue(ack);
    assert.equal(full.ok, false);
    if (full.ok) return;
    assert.equal(full.error.code, "STORAGE_FULL", full.error.message);
    assert.equal(full.error.retry.kind, "retryable_after_ms");
    assert.ok(full.error.retry.kind === "retryable_after_ms" && full.error.retry.afterMs >= 1000);
    assert.ok(full.error.message.includes(dbFile), full.error.message);
    assert.match(full.error.message, /disk .*full/i);
    assert.equal(full.error.details?.file, dbFile);
    assert.equal(await eventCount(wm), before, "nothing was recorded");

    // Space freed: the same call now goes through.
    await pragmaEverywhere(wm, "PRAGMA max_page_count = 1073741823");
    value(await wm.continue(ack), "retry after space was freed");
  } finally {
    await wm.close();
    await cleanup();
  }
});

Deno.test("a read-only database is STORAGE_READ_ONLY, not retryable, naming the file and the permission", async () => {
  const { home, dbFile, cleanup } = await tempHome();
  const wm = await open(home);
  try {
    const started = value(await wm.start({ workflowId: "waymark.bug_investigation" }), "start");
    const before = await eventCount(wm);
    // Root ignores file modes, so the connection is made read-only instead.
    await pragmaEverywhere(wm, "PRAGMA query_only = 1");
    for (
      const [what, result] of [
        ["ack", await wm.continue({ stateToken: started.stateToken, ackToken: started.ackToken })],
        ["start", await wm.start({ workflowId: "waymark.code_review" })],
      ] as const
    ) {
      assert.equal(result.ok, false, what);
      if (result.ok) continue;
      assert.equal(result.error.code, "STORAGE_READ_ONLY", `${what}: ${result.error.message}`);
      assert.deepEqual(result.error.retry, { kind: "not_retryable" });
      assert.ok(result.error.message.includes(dbFile), result.error.message);
      assert.match(result.error.message, /read-only.*write permission/s);
    }
    // Reads still work.
    value(await wm.continue({ stateToken: started.stateToken }), "rehydrate");
    await pragmaEverywhere(wm, "PRAGMA query_only = 0");
    assert.equal(await eventCount(wm), before, "nothing was recorded");
  } finally {
    await wm.close();
    await cleanup();
  }
});

/** Fills one page of a database file with garbage. */
async function damagePage(dbFile: string, page: number): Promise<void> {
  const file = await Deno.open(dbFile, { read: true, write: true });
  try {
    const header = new Uint8Array(18);
    await file.read(header);
    const size = header[16]! * 256 + header[17]!;
    const pageSize = size === 1 ? 65536 : size;
    await file.seek((page - 1) * pageSize, Deno.SeekMode.Start);
    await file.write(new Uint8Array(pageSize).fill(0xab));
  } finally {
    file.close();
  }
}

async function rows(dbFile: string, sql: string): Promise<Record<string, unknown>[]> {
  const db = createClient({ url: `file:${dbFile}` });
  try {
    const result = await db.execute(sql);
    return result.rows.map((row) => Object.fromEntries(result.columns.map((c) => [c, row[c]])));
  } finally {
    db.close();
  }
}

Deno.test("damaged pages: STORAGE_CORRUPTION_DETECTED over MCP, session marked, health logged, doctor named, writes stop", async () => {
  const original = await tempHome();
  const copy = await tempHome();
  try {
    const wm = await open(original.home);
    const started = value(await wm.start({ workflowId: "waymark.bug_investigation" }), "start");
    const acked = value(
      await wm.continue({
        stateToken: started.stateToken,
        ackToken: started.ackToken,
        output: { notesMarkdown: "reproduced the bug" },
      }),
      "ack",
    );
    await (wm.store as SqliteStore).client.execute("PRAGMA wal_checkpoint(TRUNCATE)");
    await wm.close();
    // A copy of the database (and the keys that signed its tokens), then damage the page
    // holding the outputs table: reading the acked node reads its notes from there.
    await Deno.copyFile(original.dbFile, copy.dbFile);
    await Deno.copyFile(`${original.home}/keys.json`, `${copy.home}/keys.json`);
    const [{ rootpage }] = await rows(
      copy.dbFile,
      "SELECT rootpage FROM sqlite_master WHERE type = 'table' AND name = 'outputs'",
    ) as [{ rootpage: number }];
    await damagePage(copy.dbFile, Number(rootpage));

    const client = await connectRich(copy.home);
    try {
      const damaged = err(
        await client.call("continue_workflow", {
          stateToken: acked.stateToken,
          ackToken: acked.ackToken,
          output: { notesMarkdown: "next" },
        }),
      );
      assert.equal(damaged.code, "STORAGE_CORRUPTION_DETECTED", damaged.message);
      assert.deepEqual(damaged.retry, { kind: "not_retryable" });
      assert.match(damaged.message, /waymark doctor/);
      assert.ok(damaged.message.includes(copy.dbFile), damaged.message);
      assert.equal(damaged.details?.sessionId, started.session!.sessionId);
      const health = client.notifications.find((n) =>
        n.method === "notifications/message" && n.params?.logger === "waymark.health"
      );
      assert.ok(health, "a waymark.health log message was sent");
      assert.equal(health.params?.level, "error");

      // A write that touches no damaged page is refused too: this process stopped writing.
      const refused = err(
        await client.call("start_workflow", { workflowId: "waymark.code_review" }),
      );
      assert.equal(refused.code, "STORAGE_CORRUPTION_DETECTED");
      assert.match(refused.message, /stopped writing/);
      // Read-only tools still answer.
      ok(await client.call("list_workflows", {}));
    } finally {
      await client.close();
    }
    const sessions = await rows(copy.dbFile, "SELECT session_id, health FROM sessions");
    assert.deepEqual(sessions.map((r) => [`ses_${r.session_id}`, r.health]), [
      [started.session!.sessionId, "corrupt"],
    ]);

    // A new process may write again (where the pages it needs are intact).
    const restarted = await connectRich(copy.home);
    try {
      ok(await restarted.call("start_workflow", { workflowId: "waymark.code_review" }));
    } finally {
      await restarted.close();
    }
  } finally {
    await original.cleanup();
    await copy.cleanup();
  }
});
