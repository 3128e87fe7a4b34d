/**
 * Verification the agent cannot fake, through a real MCP client on a real libSQL
 * file: in a git workspace whose user allowlisted the commands, a step's check fails and blocks
 * (its output tail as the reason, the evidence on the blocked attempt), passes after a file
 * changes, and a replay of either acknowledgement answers the recorded verdict without running
 * the command again (a counter file says how often it ran). A command not allowed falls back
 * to prose with a warning and does not block; a command that sleeps past its timeout is killed
 * and blocks; a caller with no workspace (a library call) gets VERIFICATION_UNAVAILABLE.
 */
import assert from "node:assert/strict";
import { parseRunLabel } from "../../engine/model/ids.ts";
import { exportSession, importBundle, openWaymark } from "../../mod.ts";
import { Client, StreamableHTTPClientTransport } from "npm:@modelcontextprotocol/client@2.4.0";
import { connect, ok, tempHome } from "../helpers/server.ts";
import { startHttpServer } from "../helpers/http_server.ts";
import { driveVerified, runs, verifiedWorkspace } from "../helpers/verification.ts";

Deno.test("an allowlisted check blocks until it passes, a replay reruns nothing, a disallowed one falls back to prose, a slow one is killed", async () => {
  const ws = await verifiedWorkspace();
  const client = await connect(ws.home, { cwd: ws.workspace });
  try {
    await driveVerified(client, ws);
  } finally {
    await client.close();
    await ws.cleanup();
  }
});

Deno.test("with no workspace known the command does not run: VERIFICATION_UNAVAILABLE, and the step advances", async () => {
  const ws = await verifiedWorkspace();
  const waymark = await openWaymark({ home: ws.home, workspace: ws.workspace });
  try {
    const started = await waymark.start({ workflowId: "project.verified" });
    assert.ok(started.ok);
    const acked = await waymark.continue({
      stateToken: started.value.stateToken,
      ackToken: started.value.ackToken,
      output: { notesMarkdown: "Ran it myself: it passed." },
    });
    assert.ok(acked.ok);
    assert.equal(acked.value.kind, "ok");
    const notice = acked.value.warnings!.find((w) => w.code === "VERIFICATION_UNAVAILABLE");
    assert.match(notice?.message ?? "", /no workspace folder is known.*run it yourself/);
    assert.equal(acked.value.verification?.verdict, "unavailable");
    assert.equal(await runs(ws.workspace), 0);
  } finally {
    await waymark.close();
    await ws.cleanup();
  }
});

Deno.test("a session bundle carries the evidence: exported and imported, each node keeps its verdict", async () => {
  const ws = await verifiedWorkspace();
  const other = await tempHome();
  try {
    const client = await connect(ws.home, { cwd: ws.workspace });
    const drove = await driveVerified(client, ws).finally(() => client.close());
    const source = await openWaymark({ home: ws.home });
    const exported = await exportSession(source, drove.sessionId).finally(() => source.close());
    assert.ok(exported.ok, JSON.stringify(exported));
    const target = await openWaymark({ home: other.home, dbUrl: other.dbUrl });
    try {
      const imported = await importBundle(target, exported.value.text);
      assert.ok(imported.ok, JSON.stringify(imported));
      const runId = parseRunLabel(drove.runId)!;
      const verdicts = async (nodeId: string) =>
        (await target.store.getNodeEvents(runId, nodeId))
          .filter((e) => e.kind === "evidence_recorded")
          .map((e) => e.kind === "evidence_recorded" && [e.verdict, e.exitCode, e.gitHead]);
      assert.deepEqual(await verdicts(drove.failedNodeId), [["failed", 3, ws.head]]);
      assert.deepEqual(await verdicts(drove.passedNodeId), [["passed", 0, ws.head]]);
      assert.deepEqual(await verdicts(drove.skippedNodeId), [["not_allowed", null, null]]);
      const again = await exportSession(target, imported.value.sessionId);
      assert.ok(again.ok && again.value.text === exported.value.text, "the round trip is exact");
    } finally {
      await target.close();
    }
  } finally {
    await other.cleanup();
    await ws.cleanup();
  }
});

Deno.test("the config's verification section is checked at open: absolute folders, valid patterns", async () => {
  const { home, cleanup } = await tempHome();
  try {
    for (
      const [workspaces, expected] of [
        [{ "relative/dir": { allow: ["npm test"] } }, /"relative\/dir" is not an absolute folder/],
        [
          { "/abs": { allow: ["npm * test"] } },
          /allow\[0\] \("npm \* test"\): `\*` may only be the last word/,
        ],
        [{ "/abs": { allow: ["make && make test"] } }, /is shell syntax/],
        [{ "/abs": { allow: [], shell: true } }, /shell/],
        [{ "/abs": { allow: [], env: ["NOT-A-NAME"] } }, /not an environment variable name/],
      ] as const
    ) {
      await Deno.writeTextFile(
        `${home}/config.json`,
        JSON.stringify({ verification: { workspaces } }),
      );
      await assert.rejects(() => openWaymark({ home }), expected);
    }
  } finally {
    await cleanup();
  }
});

Deno.test("over HTTP a command runs only in a folder the client named as a root, never in the server's own", async () => {
  const ws = await verifiedWorkspace();
  const server = await startHttpServer(ws.home, { cwd: ws.workspace });
  const url = new URL(`http://127.0.0.1:${server.port}/mcp`);
  const first = async (client: Client) => {
    await client.connect(new StreamableHTTPClientTransport(url));
    const started = ok(
      await client.callTool({
        name: "start_workflow",
        arguments: { workflowId: "project.verified" },
      }) as never,
    );
    return ok(
      await client.callTool({
        name: "continue_workflow",
        arguments: {
          stateToken: started.stateToken,
          ackToken: started.ackToken,
          output: { notesMarkdown: "Built." },
        },
      }) as never,
    );
  };
  const rootless = new Client({ name: "rootless", version: "1.0.0" });
  const rooted = new Client(
    { name: "rooted", version: "1.0.0" },
    { capabilities: { roots: { listChanged: true } } },
  );
  rooted.setRequestHandler("roots/list", () => ({
    roots: [{ uri: new URL(`file://${ws.workspace}/`).href }],
  }));
  try {
    const without = await first(rootless);
    assert.equal(without.kind, "ok", "the server's working directory is no client's workspace");
    assert.equal(without.verification.verdict, "unavailable");
    assert.ok(
      (without.warnings ?? []).some((w: { code: string }) => w.code === "VERIFICATION_UNAVAILABLE"),
    );
    assert.equal(await runs(ws.workspace), 0);
    const withRoot = await first(rooted);
    assert.equal(withRoot.kind, "blocked");
    assert.equal(withRoot.verification.verdict, "failed");
    assert.equal(await runs(ws.workspace), 1);
  } finally {
    await rootless.close();
    await rooted.close();
    await server.stop();
    await ws.cleanup();
  }
});
