/**
 * `waymark serve` over stdio answers the handshake and `tools/list` before it has opened
 * anything (`tools/early_server.ts`): requests sent before `tools/list` wait and are answered
 * once waymark is open, and a database that cannot be opened still ends the server with exit
 * code 1 and the reason on stderr, as it did when waymark opened before serving.
 */
import assert from "node:assert/strict";
import { RawServer } from "../helpers/raw_server.ts";
import { tempHome } from "../helpers/server.ts";
import { BUNDLED_IDS } from "../helpers/library.ts";

const INITIALIZE = {
  protocolVersion: "2025-06-18",
  capabilities: {},
  clientInfo: { name: "early-serve-test", version: "1.0.0" },
};

Deno.test("requests sent before tools/list are held and answered once waymark is open", async () => {
  const { home, cleanup } = await tempHome();
  const server = new RawServer(home);
  try {
    await server.send({ jsonrpc: "2.0", id: 1, method: "initialize", params: INITIALIZE });
    await server.send({ jsonrpc: "2.0", method: "notifications/initialized" });
    const call = { name: "start_workflow", arguments: { workflowId: "wr.code_review" } };
    await server.send({ jsonrpc: "2.0", id: 2, method: "tools/call", params: call });
    await server.send({ jsonrpc: "2.0", id: 3, method: "prompts/list", params: {} });
    await server.send({ jsonrpc: "2.0", id: 4, method: "tools/list", params: {} });
    assert.equal((await server.answer(1)).result.serverInfo.name, "waymark");
    assert.ok((await server.answer(4)).result.tools.length >= 7);
    const started = (await server.answer(2)).result;
    assert.equal(started.isError, undefined, JSON.stringify(started.content));
    assert.equal(started.structuredContent.pending.stepId.length > 0, true);
    assert.equal((await server.answer(3)).result.prompts.length, BUNDLED_IDS.length);
    const { code } = await server.close();
    assert.equal(code, 0);
  } catch (error) {
    server.kill();
    throw error;
  } finally {
    await cleanup();
  }
});

Deno.test("a database that cannot be opened ends the server after the handshake, exit 1", async () => {
  const { home, cleanup } = await tempHome();
  const server = new RawServer(home, ["--db", `file:${home}/no/such/folder/waymark.db`]);
  try {
    await server.request(1, "initialize", INITIALIZE);
    await server.send({ jsonrpc: "2.0", method: "notifications/initialized" });
    assert.ok((await server.request(2, "tools/list", {})).result.tools.length >= 7);
    await server.send({
      jsonrpc: "2.0",
      id: 3,
      method: "tools/call",
      params: { name: "list_workflows", arguments: {} },
    });
    const { code, stderr } = await server.close();
    assert.equal(code, 1);
    assert.match(stderr, /\[waymark\] fatal: .*no\/such\/folder\/waymark\.db/);
    assert.ok(!server.lines.some((line) => line.includes('"id":3')), "no answer to the call");
  } catch (error) {
    server.kill();
    throw error;
  } finally {
    await cleanup();
  }
});
