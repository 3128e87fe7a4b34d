/**
 * `waymark serve` over stdio answers the handshake and `tools/list` before it has opened
 * anything (`tools/server/early_server.ts`): requests sent before `tools/list` wait and are answered
 * once waymark is open, every request is answered even when stdin closes before waymark has
 * loaded (or right after the last line, with or without its newline), a cancelled call that
 * wrote is answered, and a database or keyring that cannot be opened is the answer to the first
 * requests (code, file, what to do) before the server exits 1.
 */
import assert from "node:assert/strict";
import { createClient } from "@libsql/client";
import Database from "npm:libsql@0.5.29";
import { type Message, onRawServer, tryParse } from "../helpers/raw_server.ts";
import { openWaymark } from "../../mod.ts";
import { BUNDLED_IDS } from "../helpers/library.ts";
import { PROFILE_NAMES, PROFILES } from "../../tools/profiles/registry.ts";
import { placeOf } from "../helpers/answers.ts";

const INITIALIZE = {
  protocolVersion: "2025-06-18",
  capabilities: {},
  clientInfo: { name: "early-serve-test", version: "1.0.0" },
};

Deno.test("requests sent before tools/list are held and answered once waymark is open", async () => {
  await onRawServer(async ({ server }) => {
    await server.send({ jsonrpc: "2.0", id: 1, method: "initialize", params: INITIALIZE });
    await server.send({ jsonrpc: "2.0", method: "notifications/initialized" });
    const call = { name: "start_workflow", arguments: { workflowId: "waymark.code_review" } };
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
  });
});

/** The answers on stdout, by id (every line must be JSON-RPC). */
function answersById(lines: string[]): Map<unknown, Message[]> {
  const byId = new Map<unknown, Message[]>();
  for (const line of lines) {
    const message = tryParse(line);
    assert.ok(message, `stdout carries JSON-RPC only: ${line}`);
    if ("method" in message) continue;
    byId.set(message.id, [...(byId.get(message.id) ?? []), message]);
  }
  return byId;
}

/**
 * Keeps the database locked (a new file, so opening it must wait for the lock) while `body`
 * runs and for `ms` after, so everything `body` sends reaches a server still loading.
 */
async function whileLoading<T>(
  dbFile: string,
  at: { ms: number; body: () => Promise<T> },
): Promise<T> {
  const db = new Database(dbFile);
  db.exec("BEGIN EXCLUSIVE");
  db.exec("CREATE TABLE held_by_the_test (x)");
  try {
    const result = await at.body();
    await new Promise((resolve) => setTimeout(resolve, at.ms));
    return result;
  } finally {
    db.exec("ROLLBACK");
    db.close();
  }
}

for (const profile of PROFILE_NAMES) {
  Deno.test(`the ${profile} profile answers the handshake and tools/list before waymark opens`, async () => {
    const published = PROFILES[profile];
    await onRawServer(async ({ server, dbFile }) => {
      // the database stays locked while both are answered: nothing waits for it to open
      const { hello, listed } = await whileLoading(dbFile, {
        ms: 0,
        body: async () => ({
          hello: (await server.request(1, "initialize", INITIALIZE)).result,
          listed: (await server.request(2, "tools/list", {})).result,
        }),
      });
      assert.equal(hello.serverInfo.name, published.serverName ?? "waymark");
      assert.equal(hello.instructions, published.instructions);
      assert.deepEqual(
        listed.tools.map((t: { name: string }) => t.name),
        published.tools.filter((t) => !t.flag).map((t) => t.name),
      );
      const { code } = await server.close();
      assert.equal(code, 0);
    }, { args: () => ["--profile", profile] });
  });
}

Deno.test("stdin closed right after a call sent during start-up: the call is still answered, exit 0", async () => {
  await onRawServer(async ({ server, dbFile }) => {
    const closing = await whileLoading(dbFile, {
      ms: 1_000,
      body: async () => {
        await server.send({ jsonrpc: "2.0", id: 1, method: "initialize", params: INITIALIZE });
        await server.send({ jsonrpc: "2.0", method: "notifications/initialized" });
        const call = { name: "start_workflow", arguments: { workflowId: "waymark.code_review" } };
        await server.send({ jsonrpc: "2.0", id: 2, method: "tools/call", params: call });
        return { exited: server.close() };
      },
    });
    const { code } = await closing.exited;
    assert.equal(code, 0);
    const started = (await server.answer(2, 1)).result;
    assert.equal(started.isError, undefined, JSON.stringify(started.content));
    assert.ok(placeOf(started.structuredContent).runId);
  });
});

Deno.test("2,000 requests queued during start-up, then EOF: every one is answered once", async () => {
  await onRawServer(async ({ server, dbFile }) => {
    const lines = [
      JSON.stringify({ jsonrpc: "2.0", id: 0, method: "initialize", params: INITIALIZE }),
      JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }),
    ];
    for (let id = 1; id <= 2000; id++) {
      lines.push(JSON.stringify(
        id % 3 === 0
          ? { jsonrpc: "2.0", id, method: "prompts/list", params: {} }
          : { jsonrpc: "2.0", id, method: "tools/call", params: { name: "list_workflows" } },
      ));
    }
    const closing = await whileLoading(dbFile, {
      ms: 1_000,
      body: async () => {
        await server.write(`${lines.join("\n")}\n`);
        return { exited: server.close() };
      },
    });
    const { code } = await closing.exited;
    assert.equal(code, 0);
    const byId = answersById(server.lines);
    for (let id = 0; id <= 2000; id++) {
      const answers = byId.get(id) ?? [];
      assert.equal(answers.length, 1, `request ${id} answered ${answers.length} times`);
      assert.equal(answers[0]!.error, undefined, JSON.stringify(answers[0]!.error));
      if (id % 3 !== 0) assert.equal(answers[0]!.result.isError, undefined);
    }
  });
});

Deno.test("a last line without a newline is a request like any other", async () => {
  await onRawServer(async ({ server }) => {
    await server.request(1, "initialize", INITIALIZE);
    await server.send({ jsonrpc: "2.0", method: "notifications/initialized" });
    await server.write(
      JSON.stringify({
        jsonrpc: "2.0",
        id: 2,
        method: "tools/call",
        params: { name: "list_workflows" },
      }),
    );
    const { code } = await server.close();
    assert.equal(code, 0);
    const listed = (await server.answer(2, 1)).result;
    assert.ok(listed.structuredContent.workflows.length > 0, JSON.stringify(listed));
  });
});

Deno.test("a start_workflow cancelled during start-up is answered with the run it wrote", async () => {
  await onRawServer(async ({ server, dbFile }) => {
    await server.send({ jsonrpc: "2.0", id: 1, method: "initialize", params: INITIALIZE });
    await server.send({ jsonrpc: "2.0", method: "notifications/initialized" });
    const call = { name: "start_workflow", arguments: { workflowId: "waymark.code_review" } };
    await server.send({ jsonrpc: "2.0", id: 2, method: "tools/call", params: call });
    await server.send({
      jsonrpc: "2.0",
      method: "notifications/cancelled",
      params: { requestId: 2, reason: "the user pressed Esc" },
    });
    const started = (await server.answer(2)).result;
    const runId = placeOf(started.structuredContent).runId;
    const { code } = await server.close();
    assert.equal(code, 0);
    const db = createClient({ url: `file:${dbFile}` });
    try {
      const runs = (await db.execute("SELECT run_id FROM runs")).rows;
      assert.equal(runs.length, 1, "one run written, and it is the one answered");
      assert.match(String(runId), /^run_/);
    } finally {
      db.close();
    }
  });
});

/** Ways a home can be unopenable, and the file and code the answer must name. */
const BROKEN_HOMES: {
  what: string;
  args?: string[];
  breakIt(home: string): Promise<void>;
  file: string;
  code: string;
}[] = [
  {
    what: "a folder at keys.json",
    breakIt: (home) => Deno.mkdir(`${home}/keys.json`),
    file: "keys.json",
    code: "STARTUP_FAILED",
  },
  {
    what: "a folder at keys.json (deepwork profile)",
    args: ["--profile", "deepwork"],
    breakIt: (home) => Deno.mkdir(`${home}/keys.json`),
    file: "keys.json",
    code: "STARTUP_FAILED",
  },
  {
    what: "a truncated keys.json",
    breakIt: (home) => Deno.writeTextFile(`${home}/keys.json`, '{"keys":[{"id":1,"sec'),
    file: "keys.json",
    code: "STARTUP_FAILED",
  },
  {
    what: "a file that is not a database",
    breakIt: (home) => Deno.writeTextFile(`${home}/waymark.db`, "not a database\n".repeat(500)),
    file: "waymark.db",
    code: "STORAGE_CORRUPTION_DETECTED",
  },
  {
    what: "a database from a newer waymark",
    breakIt: async (home) => {
      await (await openWaymark({ home })).close();
      const db = createClient({ url: `file:${home}/waymark.db` });
      await db.execute(
        "INSERT INTO waymark_migrations (name, applied_at) VALUES ('9999_from_the_future', 'x')",
      );
      db.close();
    },
    file: "waymark.db",
    code: "STARTUP_FAILED",
  },
];

for (const broken of BROKEN_HOMES) {
  Deno.test(`serve on ${broken.what}: the first requests are answered with why, then exit 1`, async () => {
    await onRawServer(async ({ server, home }) => {
      // the server answers as its profile's (waymark's own, or DeepWork's) before opening
      assert.equal(
        (await server.request(1, "initialize", INITIALIZE)).result.serverInfo.name,
        broken.args?.includes("deepwork") ? "deepwork" : "waymark",
      );
      await server.send({ jsonrpc: "2.0", method: "notifications/initialized" });
      const call = { name: "list_workflows", arguments: {} };
      const answer = await server.request(2, "tools/call", call);
      assert.equal(answer.error?.code, -32000, JSON.stringify(answer));
      const { data } = answer.error;
      assert.equal(data.code, broken.code, data.message);
      assert.equal(data.details.file, `${home}/${broken.file}`);
      assert.deepEqual(data.retry, { kind: "not_retryable" });
      assert.match(data.message, /start the server again/);
      const { code, stderr } = await server.close();
      assert.equal(code, 1);
      assert.match(stderr, new RegExp(`\\[waymark\\] fatal: .*${broken.file}`));
    }, { args: () => broken.args, prepare: (home) => broken.breakIt(home) });
  });
}

Deno.test("a database that cannot be opened is the answer to the calls held, then exit 1", async () => {
  await onRawServer(async ({ server, home }) => {
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
    const answer = await server.answer(3, 1);
    assert.equal(answer.error.data.details.file, `${home}/no/such/folder/waymark.db`);
  }, { args: (home) => ["--db", `file:${home}/no/such/folder/waymark.db`] });
});
