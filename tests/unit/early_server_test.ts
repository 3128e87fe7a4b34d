/**
 * The early server (`tools/server/early_server.ts`, what `waymark serve` answers with before the engine
 * loads), driven by a real v2 client over the SDK's in-memory transport: the handshake and
 * `tools/list` come from the published listing before anything is composed, every other request
 * waits at the gate and is answered once the full server is composed onto it, and the listing
 * then is the one the composed server gives, on each protocol revision and with the flagged tool.
 */
import assert from "node:assert/strict";
import { Client } from "npm:@modelcontextprotocol/client@2.4.0";
import { InMemoryTransport } from "@modelcontextprotocol/server";
import { createMcpServer } from "../../tools/mod.ts";
import { earlyServer } from "../../tools/server/early_server.ts";
import { PROFILES } from "../../tools/profiles/registry.ts";
import { memoryDeps } from "../helpers/memory.ts";
import { BUNDLED_IDS } from "../helpers/library.ts";

const transports = () =>
  InMemoryTransport.createLinkedPair() as unknown as [
    Parameters<Client["connect"]>[0],
    Parameters<ReturnType<typeof earlyServer>["server"]["connect"]>[0],
  ];

async function connected(options: { enableStartSession?: boolean; protocolVersion?: string }) {
  let needed = 0;
  const early = earlyServer({
    version: "0.0.0-test",
    enableStartSession: options.enableStartSession,
    onNeeded: () => void needed++,
  });
  const client = new Client({ name: "early-test", version: "1.0.0" }, {
    ...(options.protocolVersion ? { supportedProtocolVersions: [options.protocolVersion] } : {}),
  });
  const [clientSide, serverSide] = transports();
  await early.server.connect(serverSide);
  await client.connect(clientSide);
  return { early, client, needed: () => needed };
}

Deno.test("the early server answers the handshake and tools/list before the engine is there", async () => {
  const { early, client, needed } = await connected({});
  try {
    assert.equal(client.getInstructions(), PROFILES.default.instructions);
    assert.equal(needed(), 0, "the handshake needs nothing loaded");
    const listed = await client.listTools();
    assert.deepEqual(
      listed.tools.map((t) => t.name),
      PROFILES.default.tools.filter((t) => !t.flag).map((t) => t.name),
    );
    await new Promise((resolve) => setTimeout(resolve, 0));
    assert.equal(needed(), 1, "answering tools/list starts the loading");

    let answered = false;
    const call = client.callTool({ name: "list_workflows", arguments: {} }).then((r) => {
      answered = true;
      return r;
    });
    await new Promise((resolve) => setTimeout(resolve, 20));
    assert.equal(answered, false, "a call waits until the server is composed");
    assert.equal(needed(), 2, "a held request asks for the loading too");

    createMcpServer((await memoryDeps()).deps, { version: "0.0.0-test", onto: early.server });
    early.open();
    const result = await call;
    assert.equal(result.isError, undefined);
    assert.equal(
      (result.structuredContent as { workflows: unknown[] }).workflows.length,
      BUNDLED_IDS.length,
    );
  } finally {
    await client.close();
  }
});

for (const protocolVersion of [undefined, "2025-06-18"]) {
  for (const enableStartSession of [false, true]) {
    Deno.test(`tools/list early equals tools/list composed (${protocolVersion ?? "2025-11-25"}, start_session ${enableStartSession})`, async () => {
      const { early, client } = await connected({ enableStartSession, protocolVersion });
      try {
        const before = await client.listTools();
        createMcpServer((await memoryDeps()).deps, {
          version: "0.0.0-test",
          enableStartSession,
          onto: early.server,
        });
        early.open();
        const after = await client.listTools();
        assert.deepStrictEqual(before, after);
        assert.equal(before.tools.some((t) => t.name === "start_session"), enableStartSession);
      } finally {
        await client.close();
      }
    });
  }
}
