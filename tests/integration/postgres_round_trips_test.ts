/**
 * An advance on PostgreSQL in the fewest round trips: the append's sequence numbers are not
 * sent back (`store/postgres/append.ts`), so the projections that carry them leave with the
 * append and the `COMMIT`; over the team service, the task view's run row is read with the
 * `COMMIT` too (`readAfterCommit`). Counted on a real server as socket writes (the driver sends
 * what goes together in one), and checked against the log: every projected row carries the
 * sequence number of the event it came from.
 * @module
 */
import assert from "node:assert/strict";
import net from "node:net";
import { join } from "node:path";
import pg from "pg";
import { openWaymark } from "../../mod.ts";
import { resolveAuthSettings, sqlPersonalTokens } from "../../store/mod.ts";
import { TOOLS } from "../../tools/mod.ts";
import { createAuthGate } from "../../web/auth/mod.ts";
import { createMcpHttpApp } from "../../web/mcp_http.ts";
import { LONG_ID, longWorkflow } from "../bench/common.ts";
import { personalToken, toolCallRequest } from "../helpers/auth_service.ts";
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
  name: "an advance on PostgreSQL: three round trips, each projection with its event's number",
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
      // the node read; BEGIN, SET LOCAL and the children read; the append, the projections
      // and the COMMIT (the append's answer was one more before)
      assert.deepEqual(counted, [3, 3, 3]);
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

Deno.test({
  name:
    "an advance over the stateless team service: its task view's run row leaves with the COMMIT",
  ignore,
  async fn() {
    const writes = countWrites();
    const home = await Deno.makeTempDir({ prefix: "waymark-round-trips-http-" });
    // a plain workflow, every step alike (a bundled one's steps read more for their views)
    const workspace = join(home, "workspace");
    await Deno.mkdir(join(workspace, ".waymark", "workflows"), { recursive: true });
    await Deno.writeTextFile(
      join(workspace, ".waymark", "workflows", "long.json"),
      longWorkflow(8),
    );
    const dbUrl = await freshPostgresUrl();
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
      // the node read; BEGIN, SET LOCAL and the children read; the append, the projections,
      // the COMMIT and the run row (the append's answer and the run row alone were two more)
      assert.deepEqual(counted, [3, 3, 3, 3, 3]);
    } finally {
      writes.restore();
      await waymark.close();
      await Deno.remove(home, { recursive: true });
    }
  },
});
