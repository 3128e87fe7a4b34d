/**
 * A delegation tree carried by a bundle and kept by doctor. A session whose parent run has three
 * children (one complete, one open, one abandoned) is exported with the command line and
 * imported into the same home, so every run is re-keyed: the children hang from the new parent
 * at the same node; the delegation tokens inside recorded answers come back minted afresh for
 * the new runs; a rehydrate of the imported parent lists fresh tokens, a subagent takes up the
 * open child with one, its end settles the parent, and the synthesis step sees all three; the
 * copy can be aborted at its tip; the original session is untouched. `waymark doctor` passes on the database, finds a lost
 * `run_delegations` row, and `--repair` rebuilds it from the log.
 * @module
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { readTokenClaims } from "../../engine/access/tokens.ts";
import { openTestDb } from "../helpers/db.ts";
import {
  abandonChild,
  delegationWorkspace,
  driveChild,
  reachParallel,
} from "../helpers/delegation.ts";
import { runCli } from "../helpers/maintenance.ts";
import { connect, ok, tempHome } from "../helpers/server.ts";
import { placeOf } from "../helpers/answers.ts";

// deno-lint-ignore no-explicit-any
type Json = Record<string, any>;

const hex = (label: string) => label.replace(/^[a-z]+_/, "");

async function doctor(home: string, ...args: string[]): Promise<{ code: number; report: Json }> {
  const ran = await runCli(["doctor", "--json", ...args], { home });
  return { code: ran.code, report: JSON.parse(ran.out) };
}

Deno.test({
  name:
    "export → import (re-keyed) keeps the tree: fresh delegation tokens take up the open child, the synthesis sees all; doctor passes and rebuilds run_delegations",
  sanitizeResources: false,
  sanitizeOps: false,
  async fn() {
    const { home, dbUrl, cleanup } = await tempHome();
    const ws = await delegationWorkspace();
    const agent = await connect(home, { extraArgs: ws.args });
    // opened once the server made the database (with its own file modes)
    let db: Awaited<ReturnType<typeof openTestDb>> | null = null;
    try {
      const atParallel = await reachParallel(agent, "Review the billing change");
      db = await openTestDb(dbUrl);
      const [first, second, third] = atParallel.delegations as Json[];
      await driveChild(agent, first!.delegationToken, (s) => `first ${s}: fine`);
      await abandonChild(agent, third!.delegationToken, "Docs are out of scope.");
      const sid = atParallel.session.sessionId as string;
      const healthy = await doctor(home);
      assert.equal(healthy.code, 0, JSON.stringify(healthy.report.findings));

      // Export: delegation tokens leave as placeholders.
      const file = join(home, "tree.json");
      const out = await runCli(["sessions", "export", sid, "-o", file], { home });
      assert.equal(out.code, 0, out.err);
      const text = await Deno.readTextFile(file);
      assert.doesNotMatch(text, /dlg1_/);
      assert.match(text, new RegExp(`wmtoken:delegation:${hex(second!.runId)}:[0-9a-f]{16}`));

      // Import into the same home: every id is taken, so the copy is re-keyed.
      const imported = await runCli(["import", file, "--json"], { home });
      assert.equal(imported.code, 0, imported.err);
      const result = JSON.parse(imported.out).imports[0].value;
      assert.equal(result.rekeyed, true, imported.out);
      const newSid = hex(result.sessionId);
      const links = await db.rows(
        `SELECT d.run_id, d.parent_run_id, d.parent_node_id, d.step_id, d.idx FROM run_delegations d
          WHERE d.session_id = ? ORDER BY d.idx`,
        [newSid],
      );
      assert.equal(links.length, 3);
      const newParent = links[0]!.parent_run_id as string;
      assert.notEqual(newParent, hex(placeOf(atParallel).runId));
      for (const [i, l] of links.entries()) {
        assert.equal(l.parent_run_id, newParent);
        assert.equal(l.parent_node_id, placeOf(atParallel).nodeId, "node ids stay");
        assert.equal(l.step_id, "reviews");
        assert.equal(Number(l.idx), i);
        assert.equal(
          await db.number("SELECT count(*) FROM runs WHERE run_id = ? AND session_id = ?", [
            l.run_id,
            newSid,
          ]),
          1,
        );
      }
      const newSecond = links[1]!.run_id as string;

      // The recorded answer that opened the children carries delegation tokens minted afresh.
      const recorded = await db.rows(
        "SELECT response FROM attempts WHERE run_id = ? AND outcome = 'advanced'",
        [newParent],
      );
      const opened = recorded.map((r) => JSON.parse(r.response as string))
        .find((r: Json) => r.delegations)!;
      const recordedToken = opened.delegations[1].delegationToken as string;
      assert.match(recordedToken, /^dlg1_/);
      assert.notEqual(recordedToken, second!.delegationToken);
      assert.equal(readTokenClaims(recordedToken)!.runId, newSecond);
      const viaRecorded = ok(
        await agent.call("start_workflow", { delegationToken: recordedToken }),
      );
      assert.equal(hex(placeOf(viaRecorded).runId), newSecond);
      assert.equal(viaRecorded.pending.stepId, "read");

      // A rehydrate of the imported parent lists the children with fresh tokens.
      const found = ok(await agent.call("resume_session", { query: `run_${newParent}` }));
      const parentTip = found.candidates.find((c: Json) => hex(c.runId) === newParent);
      const rehydrated = ok(
        await agent.call("continue_workflow", { stateToken: parentTip.tip.stateToken }),
      );
      assert.equal(rehydrated.pending.stepId, "reviews");
      assert.deepEqual(
        rehydrated.delegations.map((c: Json) => [hex(c.runId), c.status]),
        links.map((l, i) => [l.run_id, ["complete", "open", "aborted"][i]]),
      );
      // A subagent takes up the open child with the fresh token and ends it: that settles.
      const subagent = await connect(home, { extraArgs: ws.args });
      let answers: Json[];
      try {
        answers = await driveChild(
          subagent,
          rehydrated.delegations[1].delegationToken,
          (s) => `second ${s}: fine on the copy`,
        );
      } finally {
        await subagent.close();
      }
      assert.equal(hex(placeOf(answers[0]!).runId), newSecond);
      assert.equal(answers.at(-1)!.delegatedFrom.parentRunId, `run_${newParent}`);
      assert.equal(answers.at(-1)!.delegatedFrom.settled, true);
      const synthesis = ok(
        await agent.call("continue_workflow", {
          stateToken: rehydrated.stateToken,
          ackToken: rehydrated.ackToken,
        }),
      );
      assert.equal(synthesis.pending.stepId, "reviews-synthesis");
      assert.match(synthesis.pending.prompt, /first report: fine/);
      assert.match(synthesis.pending.prompt, /second report: fine on the copy/);
      assert.match(synthesis.pending.prompt, /Aborted: Docs are out of scope/);
      // The copy can be abandoned like any run (at its tip, found under its new id).
      const abandoned = ok(
        await agent.call("abort_workflow", {
          stateToken: synthesis.stateToken,
          explanation: "The copy was only a rehearsal.",
        }),
      );
      assert.equal(abandoned.abortedStepId, "reviews-synthesis");
      // The original is untouched: its second child is still open.
      assert.equal(
        (await db.rows("SELECT status FROM runs WHERE run_id = ?", [hex(second!.runId)]))[0]!
          .status,
        "running",
      );

      // Doctor: healthy with both trees; a lost link is found and rebuilt from the log.
      const both = await doctor(home);
      assert.equal(both.code, 0, JSON.stringify(both.report.findings));
      await db.run("DELETE FROM run_delegations WHERE run_id = ?", [newSecond]);
      const damaged = await doctor(home);
      assert.equal(damaged.code, 1);
      assert.ok(
        damaged.report.findings.some((f: Json) => f.check === "projections" && !f.ok),
        JSON.stringify(damaged.report.findings),
      );
      const repaired = await doctor(home, "--repair");
      assert.equal(repaired.code, 0, JSON.stringify(repaired.report.findings));
      assert.equal(
        await db.number("SELECT count(*) FROM run_delegations WHERE run_id = ?", [newSecond]),
        1,
      );
    } finally {
      await db?.close();
      await agent.close();
      await ws.cleanup();
      await cleanup();
    }
  },
});
