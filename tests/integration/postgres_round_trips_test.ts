/**
 * An advance on PostgreSQL in the fewest round trips, two: the attempt (or its node and run) is
 * read inside the transaction, with its `BEGIN`, its `SET LOCAL` and the node's children
 * (`Store.writeAttempt`); the append's sequence numbers are not sent back
 * (`store/postgres/append.ts`), so the projections that carry them leave with the append and
 * the `COMMIT`; over the team service, the task view's run row is read with the `COMMIT` too
 * (`readAfterCommit`). A step with work to do outside a transaction goes the longer way. Counted
 * on a real server as socket writes (the driver sends what goes together in one; each of these
 * waits for its answer), and checked against the log: every projected row carries the sequence
 * number of the event it came from.
 * @module
 */
import assert from "node:assert/strict";
import net from "node:net";
import { join } from "node:path";
import pg from "pg";
import { sql } from "npm:kysely@0.29.9";
import { openWaymark } from "../../mod.ts";
import { continueWorkflow } from "../../engine/use_cases/continue_workflow.ts";
import { gitSnapshots } from "../../tools/snapshots/mod.ts";
import { resolveAuthSettings, sqlPersonalTokens } from "../../store/mod.ts";
import { TOOLS } from "../../tools/mod.ts";
import { createAuthGate } from "../../web/auth/mod.ts";
import { createMcpHttpApp } from "../../web/mcp_http.ts";
import { LONG_ID, longWorkflow } from "../bench/common.ts";
import { personalToken } from "../helpers/auth_service.ts";
import { toolCallRequest } from "../helpers/tool_call_request.ts";
import { freshPostgresUrl, postgresBin } from "../helpers/postgres.ts";

const ignore = postgresBin() === null && !Deno.env.get("CI");

type Tip = { stateToken: string; ackToken: string; pending: { stepId: string } | null };

/** Counts what reaches the sockets (patched before any client binds `write`). */
function countWrites(): { count: number; restore(): void } {
  const socket = net.Socket.prototype as unknown as { write: (...a: unknown[]) => boolean };
  const write = socket.write;
  const counter = {
    count: 0,
    restore: () => void (socket.write = write),
  };
  socket.write = function (this: unknown, ...args: unknown[]) {
    counter.count++;
    return write.apply(this, args);
  };
  return counter;
}

const advanceArgs = (at: Tip) => ({
  stateToken: at.stateToken,
  ackToken: at.ackToken,
  output: { notesMarkdown: `Done ${at.pending!.stepId}.` },
});

Deno.test({
  name: "an advance on PostgreSQL: two round trips, each projection with its event's number",
  ignore,
  async fn() {
    const writes = countWrites();
    const home = await Deno.makeTempDir({ prefix: "waymark-round-trips-" });
    const dbUrl = await freshPostgresUrl();
    const waymark = await openWaymark({ home: join(home, "home"), workspace: home, dbUrl });
    const call = async (name: string, args: Record<string, unknown>) => {
      const parsed = TOOLS.find((t) => t.name === name)!.parse(args);
      if (!parsed.ok) throw new Error(parsed.error.message);
      const result = await parsed.value.run(waymark.deps);
      if (!result.ok) throw new Error(`${name}: ${result.error.code}`);
      return result.value.value as unknown as Tip;
    };
    const advance = (at: Tip) => call("continue_workflow", advanceArgs(at));
    try {
      let at = await call("start_workflow", { workflowId: "waymark.bug_investigation" });
      at = await advance(at); // every statement prepared on its connection
      const counted: number[] = [];
      for (let i = 0; i < 3 && at.pending; i++) {
        writes.count = 0;
        at = await advance(at);
        counted.push(writes.count);
      }
      // BEGIN, SET LOCAL, the children and the attempt-or-node read; the append, the
      // projections and the COMMIT (the attempt read before the transaction, and the append's
      // answer, were one more each before)
      assert.deepEqual(counted, [2, 2, 2]);
    } finally {
      writes.restore();
      await waymark.close();
    }
    const client = new pg.Client({ connectionString: dbUrl });
    await client.connect();
    try {
      const mismatched = await client.query(`
        SELECT 'nodes' AS t, n.node_id AS id FROM nodes n JOIN events e ON e.seq = n.created_seq
          WHERE e.kind <> 'node_created' OR e.payload::jsonb->>'nodeId' <> n.node_id
        UNION ALL SELECT 'outputs', o.node_id FROM outputs o JOIN events e ON e.seq = o.created_seq
          WHERE e.kind <> 'output_recorded' OR e.payload::jsonb->>'nodeId' <> o.node_id
        UNION ALL SELECT 'attempts', a.attempt_id FROM attempts a
          JOIN events e ON e.seq = a.created_seq
          WHERE e.kind NOT IN ('advance_recorded', 'checkpoint_recorded')
            OR e.payload::jsonb->>'attemptId' <> a.attempt_id
        UNION ALL SELECT 'edges', d.to_id FROM edges d JOIN events e ON e.seq = d.created_seq
          WHERE e.kind <> 'edge_created' OR e.payload::jsonb->>'toId' <> d.to_id`);
      assert.deepEqual(mismatched.rows, []);
      const counts = await client.query(`SELECT
        (SELECT count(*) FROM nodes)::int AS nodes,
        (SELECT count(*) FROM nodes n JOIN events e ON e.seq = n.created_seq)::int AS matched,
        (SELECT count(*) FROM attempts a JOIN events e ON e.seq = a.created_seq)::int AS attempts`);
      const { nodes, matched, attempts } = counts.rows[0];
      assert.ok(nodes >= 5 && matched === nodes, `${matched} of ${nodes} nodes`);
      assert.ok(attempts >= 4, `${attempts} attempts matched`);
    } finally {
      await client.end();
      await Deno.remove(home, { recursive: true });
    }
  },
});

/** A temporary home whose workspace holds one workflow file, and a fresh database for it. */
async function workspaceWith(
  file: string,
  text: string,
): Promise<{ home: string; workspace: string; dbUrl: string }> {
  const home = await Deno.makeTempDir({ prefix: "waymark-round-trips-" });
  const workspace = join(home, "workspace");
  await Deno.mkdir(join(workspace, ".waymark", "workflows"), { recursive: true });
  await Deno.writeTextFile(join(workspace, ".waymark", "workflows", file), text);
  return { home, workspace, dbUrl: await freshPostgresUrl() };
}

Deno.test({
  name:
    "an advance over the stateless team service: its task view's run row leaves with the COMMIT",
  ignore,
  async fn() {
    const writes = countWrites();
    // a plain workflow, every step alike (a bundled one's steps read more for their views)
    const { home, workspace, dbUrl } = await workspaceWith("long.json", longWorkflow(8));
    const resource = "https://waymark.test/mcp";
    const waymark = await openWaymark({ home, workspace, dbUrl });
    try {
      const token = await personalToken(home, {
        name: "t",
        scope: "waymark",
        extra: ["--db", dbUrl],
      });
      const auth = resolveAuthSettings(undefined, {
        resource,
        scopes: ["waymark"],
        personalTokens: true,
      });
      if (!auth.ok) throw new Error(auth.message);
      const gate = createAuthGate({
        settings: auth.settings!,
        personalTokens: sqlPersonalTokens(waymark.store.db, waymark.deps),
      });
      const { app } = createMcpHttpApp(
        (taskOwner) => waymark.mcpServer({ taskOwner, stateless: true }),
        { port: () => 8080, stateless: true, auth: gate },
      );
      const call = async (name: string, args: Record<string, unknown>): Promise<Tip> => {
        const response = await app.fetch(
          toolCallRequest({ host: "127.0.0.1:8080", token, id: 1 }, name, args),
        );
        const result = JSON.parse(await response.text()).result;
        assert.ok(result && !result.isError, JSON.stringify(result));
        // the task view is part of the answer
        assert.ok(result._meta?.["io.modelcontextprotocol/related-task"] ?? result.task, "task");
        return result.structuredContent as Tip;
      };
      let at = await call("start_workflow", { workflowId: LONG_ID });
      at = await call("continue_workflow", advanceArgs(at));
      const counted: number[] = [];
      for (let i = 0; i < 5 && at.pending; i++) {
        writes.count = 0;
        at = await call("continue_workflow", advanceArgs(at));
        counted.push(writes.count);
      }
      // BEGIN, SET LOCAL, the children and the attempt-or-node read; the append, the
      // projections, the COMMIT and the run row (the attempt read before the transaction, the
      // append's answer and the run row alone were three more)
      assert.deepEqual(counted, [2, 2, 2, 2, 2]);
      writes.restore();
      // every event of every advance names the principal the token stands for
      const unnamed = await waymark.store.db.selectFrom("events").select("kind")
        .where(sql<boolean>`payload::jsonb->'principal'->>'subject' is null`).execute();
      assert.deepEqual(unnamed.map((e) => e.kind), []);
    } finally {
      writes.restore();
      await waymark.close();
      await Deno.remove(home, { recursive: true });
    }
  },
});

/** A workflow whose second step runs a command to verify it, the others plain. */
const CHECKED = JSON.stringify({
  id: "project.checked",
  name: "Checked",
  description: "One step verified by a command.",
  version: "1.0.0",
  steps: [
    { id: "warm", title: "Warm", prompt: "Start." },
    { id: "checked", title: "Checked", prompt: "Check.", verify: { run: ["true"] } },
    { id: "snapped", title: "Snapped", prompt: "Snapshot." },
    { id: "plain", title: "Plain", prompt: "Go on." },
    { id: "done", title: "Done", prompt: "Finish." },
  ],
});

Deno.test({
  name:
    "a step with work outside a transaction: a verification command, a snapshot, the longer way",
  ignore,
  async fn() {
    const writes = countWrites();
    const { home, workspace, dbUrl } = await workspaceWith("checked.json", CHECKED);
    const waymark = await openWaymark({ home: join(home, "home"), workspace, dbUrl });
    // snapshots are off in tests unless asked for (`tests/helpers/server.ts`)
    const snapshotting = {
      deps: { ...waymark.deps, snapshots: gitSnapshots({ taking: true }) },
      options: { workspace: { workspace, gitBranch: null, gitHeadSha: null } },
    };
    const plain = { deps: waymark.deps, options: {} };
    const advance = async (at: Tip, call = plain) => {
      const result = await continueWorkflow(call.deps, advanceArgs(at), call.options);
      if (!result.ok) throw new Error(result.error.code);
      return result.value as unknown as Tip;
    };
    try {
      const started = await waymark.start({ workflowId: "project.checked" });
      if (!started.ok) throw new Error(started.error.code);
      let at = await advance(started.value as unknown as Tip); // statements prepared
      const counted: number[] = [];
      for (const call of [plain, snapshotting, plain]) {
        writes.count = 0;
        at = await advance(at, call);
        counted.push(writes.count);
      }
      // the verified step: the transaction that read it left (rolled back) for the command,
      // then the write in a transaction of its own; the snapshot taken before anything is read
      // (the attempt read, then the transaction's two); a plain step again in two
      assert.deepEqual(counted, [4, 3, 2]);
      assert.equal(at.pending?.stepId, "done");
    } finally {
      writes.restore();
      await waymark.close();
      await Deno.remove(home, { recursive: true });
    }
  },
});
