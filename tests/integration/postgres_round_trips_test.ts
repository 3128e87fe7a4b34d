/**
 * An advance on PostgreSQL in the fewest round trips: the append's sequence numbers are not
 * sent back (`store/postgres/append.ts`), so the projections that carry them leave with the
 * append and the `COMMIT`. Counted on a real server as socket writes (the driver sends what
 * goes together in one), and checked against the log: every projected row carries the sequence
 * number of the event it came from.
 * @module
 */
import assert from "node:assert/strict";
import net from "node:net";
import { join } from "node:path";
import pg from "pg";
import { openWaymark } from "../../mod.ts";
import { TOOLS } from "../../tools/mod.ts";
import { freshPostgresUrl, postgresBin } from "../helpers/postgres.ts";

const ignore = postgresBin() === null && !Deno.env.get("CI");

type Tip = { stateToken: string; ackToken: string; pending: { stepId: string } | null };

Deno.test({
  name: "an advance on PostgreSQL: three round trips, each projection with its event's number",
  ignore,
  async fn() {
    // count what reaches the sockets (before any client binds `write`)
    const socket = net.Socket.prototype as unknown as { write: (...a: unknown[]) => boolean };
    const write = socket.write;
    let writes = 0;
    socket.write = function (this: unknown, ...args: unknown[]) {
      writes++;
      return write.apply(this, args);
    };
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
    const advance = (at: Tip) =>
      call("continue_workflow", {
        stateToken: at.stateToken,
        ackToken: at.ackToken,
        output: { notesMarkdown: `Done ${at.pending!.stepId}.` },
      });
    try {
      let at = await call("start_workflow", { workflowId: "waymark.bug_investigation" });
      at = await advance(at); // every statement prepared on its connection
      const counted: number[] = [];
      for (let i = 0; i < 3 && at.pending; i++) {
        writes = 0;
        at = await advance(at);
        counted.push(writes);
      }
      // the node read; BEGIN, SET LOCAL and the children read; the append, the projections
      // and the COMMIT (the append's answer was one more before)
      assert.deepEqual(counted, [3, 3, 3]);
    } finally {
      socket.write = write;
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
