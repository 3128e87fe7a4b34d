/**
 * `keys.json` as an attacker or an accident leaves it: a FIFO there used to hang `serve`,
 * `doctor` and every command that opens waymark (reading a FIFO waits for a writer forever);
 * each now refuses it at once, naming the file. And a running server picks up `keys rotate`:
 * the tokens it hands out after a rotation still verify after the next rotation and a restart
 * (they used to be signed with the key it started with, which two rotations retire).
 * @module
 */
import assert from "node:assert/strict";
import { type Message, RawServer } from "../helpers/raw_server.ts";
import { runCli } from "../helpers/maintenance.ts";
import { serverArgs, tempHome } from "../helpers/server.ts";
import { ROOT } from "../helpers/server.ts";

/** Runs `waymark ARGS` on `home`, killed after `ms`: a hang fails the test instead of stalling it. */
async function runBounded(
  args: string[],
  options: { stdin?: string; ms?: number } = {},
): Promise<{ code: number; err: string; out: string }> {
  const child = new Deno.Command(Deno.execPath(), {
    args,
    cwd: ROOT,
    stdin: "piped",
    stdout: "piped",
    stderr: "piped",
    env: { NO_COLOR: "1", WAYMARK_HOME: "", WAYMARK_DB_URL: "" },
  }).spawn();
  const writer = child.stdin.getWriter();
  if (options.stdin) await writer.write(new TextEncoder().encode(options.stdin));
  const timer = setTimeout(() => child.kill("SIGKILL"), options.ms ?? 20_000);
  try {
    const done = await child.output();
    const text = (b: Uint8Array) => new TextDecoder().decode(b);
    return { code: done.code, out: text(done.stdout), err: text(done.stderr) };
  } finally {
    clearTimeout(timer);
    await writer.close().catch(() => {});
  }
}

Deno.test("a FIFO at keys.json is refused at once by serve, doctor and sessions, naming the file", async () => {
  const { home, cleanup } = await tempHome();
  try {
    assert.equal((await runCli(["sessions", "list"], { home })).code, 0); // creates the home
    const keys = `${home}/keys.json`;
    await Deno.remove(keys);
    const fifo = await new Deno.Command("mkfifo", { args: [keys] }).output();
    assert.equal(fifo.code, 0);
    const home_ = ["--home", home];

    const doctor = await runBounded([
      "run",
      "-A",
      "--quiet",
      "main.ts",
      "doctor",
      "--json",
      ...home_,
    ]);
    assert.equal(doctor.code, 1, `doctor: ${doctor.err}`);
    const finding = JSON.parse(doctor.out).findings.find((f: Message) => f.check === "keyring");
    assert.match(finding.message, new RegExp(`${keys} is a FIFO, not a regular file`));

    const list = await runBounded([
      "run",
      "-A",
      "--quiet",
      "main.ts",
      "sessions",
      "list",
      ...home_,
    ]);
    assert.notEqual(list.code, 0, "sessions list was killed or succeeded");
    assert.notEqual(list.code, 137, "sessions list hung");
    assert.match(list.err, /keys\.json is a FIFO, not a regular file/);

    const initialize = JSON.stringify({
      jsonrpc: "2.0",
      id: 1,
      method: "initialize",
      params: {
        protocolVersion: "2025-06-18",
        capabilities: {},
        clientInfo: { name: "fifo-test", version: "1" },
      },
    });
    const call = JSON.stringify({
      jsonrpc: "2.0",
      id: 2,
      method: "tools/call",
      params: { name: "list_workflows", arguments: {} },
    });
    // stdin stays open: the server must end (or answer) on its own, not wait on the FIFO.
    const served = await runBounded(serverArgs(home), {
      stdin: `${initialize}\n{"jsonrpc":"2.0","method":"notifications/initialized"}\n${call}\n`,
    });
    assert.notEqual(served.code, 137, "serve hung on the FIFO");
    assert.match(served.err + served.out, /keys\.json is a FIFO, not a regular file/);
  } finally {
    await cleanup();
  }
});

async function tool(server: RawServer, id: number, name: string, args: Message): Promise<Message> {
  await server.send({
    jsonrpc: "2.0",
    id,
    method: "tools/call",
    params: { name, arguments: args },
  });
  return (await server.answer(id, 30_000)).result;
}

Deno.test("a running server picks up keys rotate: its later tokens survive the next rotation and a restart", async () => {
  const { home, cleanup } = await tempHome();
  let server = new RawServer(home);
  try {
    await server.handshake("rotate-test");
    const started = (await tool(server, 2, "start_workflow", { workflowId: "waymark.code_review" }))
      .structuredContent;
    const rotate = async () => {
      const ran = await runCli(["keys", "rotate"], { home });
      assert.equal(ran.code, 0, ran.err);
      assert.match(ran.out, /running servers sign with the new key within a second/);
    };
    await rotate();
    await new Promise((wake) => setTimeout(wake, 1_200));
    // Signed with the key the server started with, still the file's previous key: accepted.
    const advanced = await tool(server, 3, "continue_workflow", {
      stateToken: started.stateToken,
      ackToken: started.ackToken,
      output: { notesMarkdown: "reviewed the scope" },
    });
    assert.notEqual(advanced.isError, true, JSON.stringify(advanced.structuredContent));
    const after = advanced.structuredContent;
    await rotate();
    await server.close();
    server = new RawServer(home);
    await server.handshake("rotate-test");
    const resumed = await tool(server, 4, "continue_workflow", {
      stateToken: after.stateToken,
      ackToken: after.ackToken,
      output: { notesMarkdown: "carried on after the restart" },
    });
    assert.notEqual(
      resumed.isError,
      true,
      `a token the running server handed out after a rotation was refused: ${
        JSON.stringify(resumed.structuredContent?.error)
      }`,
    );
  } finally {
    server.kill();
    await server.close().catch(() => {});
    await cleanup();
  }
});
