/**
 * A workflow's `regex` rule, or a `pattern` inside a `schema` rule, cannot stall the server:
 * `^(a+)+$` against a 41-character near-miss takes a backtracking engine hours, and the server
 * answered nobody meanwhile. Patterns are now matched in linear time where the notes are tested,
 * `workflows validate` warns about them, and a schema the linear engine cannot check
 * (`patternProperties`, lookahead) is refused when its file loads.
 * @module
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { type Message, RawServer } from "../helpers/raw_server.ts";
import { MAIN, ROOT, tempHome } from "../helpers/server.ts";

const CATASTROPHIC = "^(a+)+$";
const REGEX_RULE = { type: "regex", pattern: CATASTROPHIC };
/** The same pattern on a string inside JSON notes. */
const SCHEMA_RULE = {
  type: "schema",
  schema: {
    type: "object",
    properties: { v: { type: "string", pattern: CATASTROPHIC } },
    required: ["v"],
  },
};

async function writeRegexWorkflow(dir: string, rule: unknown = REGEX_RULE): Promise<string> {
  await Deno.mkdir(dir, { recursive: true });
  const file = join(dir, "regex_gate.json");
  await Deno.writeTextFile(
    file,
    JSON.stringify({
      id: "project.regex_gate",
      name: "Regex gate",
      description: "One step whose notes must match an author's pattern.",
      version: "1.0.0",
      steps: [
        {
          id: "only",
          title: "Only",
          prompt: "Report.",
          validationCriteria: rule,
        },
        { id: "after", title: "After", prompt: "Done." },
      ],
    }),
  );
  return file;
}

async function call(server: RawServer, id: number, name: string, args: Message) {
  await server.send({
    jsonrpc: "2.0",
    id,
    method: "tools/call",
    params: { name, arguments: args },
  });
}

Deno.test("a catastrophic regex rule blocks the step without stalling the server", async () => {
  const { home, cleanup } = await tempHome();
  const dir = join(home, "flows");
  await writeRegexWorkflow(dir);
  const server = new RawServer(home, ["--workflows-dir", dir]);
  try {
    await server.handshake("regex-test");
    await call(server, 2, "start_workflow", { workflowId: "project.regex_gate" });
    const started = (await server.answer(2)).result.structuredContent;
    assert.ok(started.ackToken, JSON.stringify(started));
    const ack = { stateToken: started.stateToken, ackToken: started.ackToken };
    // The near-miss: 40 `a`s and a `b`. A backtracking engine never comes back from it.
    await call(server, 3, "continue_workflow", {
      ...ack,
      output: { notesMarkdown: `${"a".repeat(40)}b` },
    });
    await server.send({ jsonrpc: "2.0", id: 4, method: "ping" });
    // Generous bounds: a stalled event loop answers neither, ever.
    const pong = await server.answer(4, 30_000);
    assert.deepEqual(pong.result, {});
    const blocked = (await server.answer(3, 30_000)).result.structuredContent;
    assert.equal(blocked.kind, "blocked", JSON.stringify(blocked));
    assert.match(JSON.stringify(blocked.blockers), /must match/);
    // A long near-miss too: linear time, whatever the length.
    await call(server, 5, "continue_workflow", {
      stateToken: blocked.stateToken,
      ackToken: blocked.ackToken,
      output: { notesMarkdown: `${"a".repeat(60_000)}b` },
    });
    const again = (await server.answer(5, 30_000)).result.structuredContent;
    assert.equal(again.kind, "blocked");
    await call(server, 6, "continue_workflow", {
      stateToken: again.stateToken,
      ackToken: again.ackToken,
      output: { notesMarkdown: "aaaa" },
    });
    const advanced = (await server.answer(6, 30_000)).result.structuredContent;
    assert.equal(advanced.kind, "ok", JSON.stringify(advanced));
    assert.equal(advanced.pending?.stepId, "after");
  } finally {
    server.kill();
    await server.close().catch(() => {});
    await cleanup();
  }
});

Deno.test("workflows validate warns about a pattern that backtracking engines take exponential time on", async () => {
  const dir = await Deno.makeTempDir({ prefix: "waymark-regex-" });
  try {
    const file = await writeRegexWorkflow(dir);
    const ran = await new Deno.Command(Deno.execPath(), {
      args: ["run", "-A", "--quiet", MAIN, "workflows", "validate", file],
      cwd: ROOT,
      env: { WAYMARK_HOME: join(dir, "home"), NO_COLOR: "1" },
    }).output();
    const out = new TextDecoder().decode(ran.stdout);
    assert.equal(ran.code, 0, new TextDecoder().decode(ran.stderr));
    assert.match(out, /: ok \(project\.regex_gate/);
    assert.match(out, /warning \[BACKTRACKING_PATTERN\]: step `only`: the regex \/\^\(a\+\)\+\$\//);
    assert.match(out, /repeats `\(a\+\)\+`/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

Deno.test("a catastrophic `pattern` in a schema rule blocks the step without stalling the server", async () => {
  const { home, cleanup } = await tempHome();
  const dir = join(home, "flows");
  await writeRegexWorkflow(dir, SCHEMA_RULE);
  const server = new RawServer(home, ["--workflows-dir", dir]);
  try {
    await server.handshake("regex-test");
    await call(server, 2, "start_workflow", { workflowId: "project.regex_gate" });
    const started = (await server.answer(2)).result.structuredContent;
    assert.ok(started.ackToken, JSON.stringify(started));
    await call(server, 3, "continue_workflow", {
      stateToken: started.stateToken,
      ackToken: started.ackToken,
      output: { notesMarkdown: JSON.stringify({ v: `${"a".repeat(40)}b` }) },
    });
    await server.send({ jsonrpc: "2.0", id: 4, method: "ping" });
    assert.deepEqual((await server.answer(4, 30_000)).result, {});
    const blocked = (await server.answer(3, 30_000)).result.structuredContent;
    assert.equal(blocked.kind, "blocked", JSON.stringify(blocked));
    assert.match(
      JSON.stringify(blocked.blockers),
      /`v`: String does not match pattern \/\^\(a\+\)\+\$\//,
    );
    await call(server, 5, "continue_workflow", {
      stateToken: blocked.stateToken,
      ackToken: blocked.ackToken,
      output: { notesMarkdown: JSON.stringify({ v: "aaaa" }) },
    });
    const advanced = (await server.answer(5, 30_000)).result.structuredContent;
    assert.equal(advanced.kind, "ok", JSON.stringify(advanced));
  } finally {
    server.kill();
    await server.close().catch(() => {});
    await cleanup();
  }
});

async function validate(file: string, home: string): Promise<{ code: number; out: string }> {
  const ran = await new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "--quiet", MAIN, "workflows", "validate", file],
    cwd: ROOT,
    env: { WAYMARK_HOME: home, NO_COLOR: "1" },
  }).output();
  const decode = (b: Uint8Array) => new TextDecoder().decode(b);
  return { code: ran.code, out: decode(ran.stdout) + decode(ran.stderr) };
}

Deno.test("schema rules: validate warns about a backtracking pattern and refuses what cannot run in linear time", async () => {
  const dir = await Deno.makeTempDir({ prefix: "waymark-regex-" });
  const home = join(dir, "home");
  try {
    const warned = await validate(await writeRegexWorkflow(join(dir, "a"), SCHEMA_RULE), home);
    assert.equal(warned.code, 0, warned.out);
    assert.match(warned.out, /warning \[BACKTRACKING_PATTERN\]: step `only`/);
    const keyed = { type: "schema", schema: { patternProperties: { "^(a+)+$": {} } } };
    const refusedKeys = await validate(await writeRegexWorkflow(join(dir, "b"), keyed), home);
    assert.equal(refusedKeys.code, 1, refusedKeys.out);
    assert.match(refusedKeys.out, /`patternProperties` is not supported/);
    const lookahead = {
      type: "schema",
      schema: { properties: { v: { type: "string", pattern: "^(?=a)a$" } } },
    };
    const refusedAhead = await validate(await writeRegexWorkflow(join(dir, "c"), lookahead), home);
    assert.equal(refusedAhead.code, 1, refusedAhead.out);
    assert.match(refusedAhead.out, /pattern \/\^\(\?=a\)a\$\//);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
