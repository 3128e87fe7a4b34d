/**
 * Token usage: Claude Code transcript lines read for numbers only (a corrupt line, a line being
 * written, a missing transcript, a rewritten one), and the pure attribution of calls to a step's
 * window and the budget warning.
 * @module
 */
import assert from "node:assert/strict";
import { appendFile, mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  attributeUsage,
  budgetWarning,
  type ModelCall,
  NO_USAGE,
} from "../../engine/cost/usage.ts";
import {
  claudeCodeMeter,
  parseTranscriptLine,
  TRANSCRIPT_WAIT_MS,
} from "../../store/transcripts/claude_code.ts";

const SESSION = "0b7c1a52-1f7e-4c55-9d0b-3a5c4c1e2f10";

/** An assistant line as Claude Code writes it, with text that must never be kept. */
function assistant(
  id: string,
  at: string,
  usage: Record<string, number>,
  toolUse?: string,
): string {
  const content: unknown[] = [{ type: "text", text: "SECRET agent text" }];
  if (toolUse) content.push({ type: "tool_use", id: toolUse, name: "x", input: { q: "SECRET" } });
  return JSON.stringify({
    type: "assistant",
    sessionId: SESSION,
    timestamp: at,
    requestId: `req_${id}`,
    uuid: crypto.randomUUID(),
    message: {
      id,
      role: "assistant",
      content,
      usage: { service_tier: "standard", ...usage },
    },
  });
}

const user = (at: string) =>
  JSON.stringify({ type: "user", timestamp: at, message: { content: "SECRET prompt" } });

const call = (id: string, at: string, input: number, output: number): ModelCall => ({
  id,
  at,
  usage: {
    inputTokens: input,
    outputTokens: output,
    cacheCreationInputTokens: 0,
    cacheReadInputTokens: 0,
  },
});

Deno.test("a transcript line gives numbers and a time only, or says it is unreadable", () => {
  const parsed = parseTranscriptLine(assistant("msg_1", "2026-01-01T00:00:01.000Z", {
    input_tokens: 10,
    output_tokens: 5,
    cache_creation_input_tokens: 100,
    cache_read_input_tokens: 1000,
  }));
  assert.deepEqual(parsed, {
    id: "msg_1",
    at: "2026-01-01T00:00:01.000Z",
    usage: {
      inputTokens: 10,
      outputTokens: 5,
      cacheCreationInputTokens: 100,
      cacheReadInputTokens: 1000,
    },
  });
  assert.ok(!JSON.stringify(parsed).includes("SECRET"));
  assert.equal(parseTranscriptLine(user("2026-01-01T00:00:00Z")), null);
  assert.equal(parseTranscriptLine('{"type":"assistant","message":'), "bad");
  assert.equal(parseTranscriptLine("[1,2]"), "bad");
  // an assistant line without usage (a synthetic message) records no call
  assert.equal(
    parseTranscriptLine(JSON.stringify({ type: "assistant", timestamp: "x", message: {} })),
    null,
  );
  // a count that is not a count is read as 0, not as the line's failure
  const odd = parseTranscriptLine(
    assistant("msg_2", "2026-01-01T00:00:02Z", { input_tokens: -3, output_tokens: 7 }),
  );
  assert.ok(odd && odd !== "bad");
  assert.equal(odd.usage.inputTokens, 0);
  assert.equal(odd.usage.outputTokens, 7);
});

Deno.test("attribution counts the calls after the window's start up to its end, each id once", () => {
  const calls = [
    call("a", "2026-01-01T00:00:00.000Z", 1, 1), // at the start: the previous step's
    call("b", "2026-01-01T00:00:01.000Z", 10, 2),
    call("b", "2026-01-01T00:00:01.000Z", 10, 30), // a second line of the same call
    call("c", "2026-01-01T00:00:05.000Z", 100, 4), // at the end: included
    call("d", "2026-01-01T00:00:05.001Z", 1000, 8),
    call("e", "not a time", 5, 5),
  ];
  const u = attributeUsage(calls, {
    from: "2026-01-01T00:00:00.000Z",
    to: "2026-01-01T00:00:05Z",
  });
  assert.deepEqual(u, {
    inputTokens: 110,
    outputTokens: 34,
    cacheCreationInputTokens: 0,
    cacheReadInputTokens: 0,
    calls: 2,
  });
  assert.deepEqual(
    attributeUsage(calls, { from: "2026-01-02T00:00:00Z", to: "2026-01-03T00:00:00Z" }),
    NO_USAGE,
  );
});

Deno.test("past its budget a run's answers carry a warning, never a refusal", () => {
  const total = { ...NO_USAGE, inputTokens: 900, outputTokens: 101, calls: 3 };
  assert.equal(budgetWarning(total, null), null);
  assert.equal(budgetWarning(total, 1001), null);
  const warning = budgetWarning(total, 1000);
  assert.equal(warning?.code, "TOKEN_BUDGET_EXCEEDED");
  assert.match(warning!.message, /1001 tokens, past its budget of 1000/);
});

async function withConfig(fn: (config: string, file: string) => Promise<void>) {
  const config = await mkdtemp(join(tmpdir(), "waymark-claude-"));
  try {
    const project = join(config, "projects", "-some-other-project");
    await mkdir(project, { recursive: true });
    await fn(config, join(project, `${SESSION}.jsonl`));
  } finally {
    await rm(config, { recursive: true, force: true });
  }
}

Deno.test("the meter reads only what was appended, waits for a line's end, counts bad lines once", async () => {
  await withConfig(async (config, file) => {
    const meter = claudeCodeMeter({
      env: { CLAUDE_CODE_SESSION_ID: SESSION, CLAUDE_CONFIG_DIR: config },
      cwd: "/work/elsewhere",
    })!;
    assert.equal(meter.source, "claude_code");
    const missing = await meter.read();
    assert.equal(missing.notice?.code, "USAGE_UNAVAILABLE");
    assert.deepEqual(missing.calls, []);

    const first = assistant("msg_1", "2026-01-01T00:00:01Z", { input_tokens: 3, output_tokens: 1 });
    const second = assistant("msg_2", "2026-01-01T00:00:02Z", { input_tokens: 4 });
    await writeFile(file, `${user("2026-01-01T00:00:00Z")}\n${first}\n${second.slice(0, 20)}`);
    const one = await meter.read();
    assert.equal(one.notice, null);
    assert.deepEqual(one.calls.map((c) => c.id), ["msg_1"]);

    await appendFile(file, `${second.slice(20)}\n{"type":"assistant",broken\n`);
    const two = await meter.read();
    assert.deepEqual(two.calls.map((c) => c.id), ["msg_1", "msg_2"]);
    assert.equal(two.notice?.code, "USAGE_PARTIAL");
    assert.ok(!two.notice.message.includes("broken"), "no transcript text in a notice");

    const three = await meter.read(); // nothing new: no notice again, same calls
    assert.equal(three.notice, null);
    assert.equal(three.calls.length, 2);

    await writeFile(file, `${assistant("msg_9", "2026-01-01T00:01:00Z", { input_tokens: 1 })}\n`);
    const rewritten = await meter.read(); // read again from its start
    assert.deepEqual(rewritten.calls.map((c) => c.id), ["msg_1", "msg_2", "msg_9"]);
  });
});

Deno.test("no session id in the environment: no meter; an unsafe one: a notice, no file read", async () => {
  assert.equal(claudeCodeMeter({ env: { HOME: "/nowhere" }, cwd: "/" }), null);
  const meter = claudeCodeMeter({
    env: { CLAUDE_CODE_SESSION_ID: "../../etc/passwd", HOME: "/nowhere" },
    cwd: "/",
  })!;
  const reading = await meter.read();
  assert.equal(reading.notice?.code, "USAGE_UNAVAILABLE");
  assert.deepEqual(reading.calls, []);
});

Deno.test("a reading waits for the call behind a request; settle makes a call count once", async () => {
  await withConfig(async (config, file) => {
    const meter = claudeCodeMeter({
      env: { CLAUDE_CODE_SESSION_ID: SESSION, CLAUDE_CONFIG_DIR: config },
      cwd: "/",
    })!;
    await writeFile(file, `${assistant("msg_1", "2026-01-01T00:00:01Z", { input_tokens: 1 })}\n`);
    // the host writes the line of the call behind the request a moment after calling the tool
    const late = assistant("msg_2", "2026-01-01T00:00:02Z", { input_tokens: 2 }, "toolu_7");
    const timer = setTimeout(() => appendFile(file, `${late}\n`), 100);
    const reading = await meter.read({ through: "toolu_7" });
    clearTimeout(timer);
    assert.deepEqual(reading.calls.map((c) => c.id), ["msg_1", "msg_2"]);
    assert.deepEqual(reading.calls[1]!.toolUseIds, ["toolu_7"]);
    assert.equal(reading.notice, null);
    assert.equal(reading.since, null);
    assert.ok(!JSON.stringify(reading).includes("SECRET"));

    meter.settle("2026-01-01T00:00:02Z");
    meter.settle("2026-01-01T00:00:01Z"); // an older end never moves it back
    assert.equal((await meter.read()).since, "2026-01-01T00:00:02Z");

    const after = await meter.read({ after: "2026-01-01T00:00:01Z" });
    assert.deepEqual(after.calls.map((c) => c.id), ["msg_2"], "only the calls after a time");

    const never = await meter.read({ through: "toolu_missing" });
    assert.equal(never.notice?.code, "USAGE_PARTIAL");
    assert.equal(never.calls.length, 2, "what was read still counts");
  });
});

Deno.test("a subagent's transcript is read with its session's, and its calls waited for", async () => {
  await withConfig(async (config, file) => {
    const meter = claudeCodeMeter({
      env: { CLAUDE_CODE_SESSION_ID: SESSION, CLAUDE_CONFIG_DIR: config },
      cwd: "/",
    })!;
    await writeFile(file, `${assistant("msg_1", "2026-01-01T00:00:01Z", { input_tokens: 1 })}\n`);
    const folder = join(file.replace(/\.jsonl$/, ""), "subagents", "workflows");
    await mkdir(folder, { recursive: true });
    const sub = join(folder, "agent-a1b2.jsonl");
    await writeFile(sub, `${assistant("msg_s1", "2026-01-01T00:00:02Z", { input_tokens: 5 })}\n`);
    const first = await meter.read();
    assert.deepEqual(first.calls.map((c) => c.id), ["msg_1", "msg_s1"]);
    const late = assistant("msg_s2", "2026-01-01T00:00:03Z", { input_tokens: 7 }, "toolu_sub");
    const timer = setTimeout(() => appendFile(sub, `${late}\n`), 60);
    const waited = await meter.read({ through: "toolu_sub" });
    clearTimeout(timer);
    assert.equal(waited.notice, null);
    const u = attributeUsage(waited.calls, {
      from: "2026-01-01T00:00:00Z",
      to: "2026-01-01T00:00:03Z",
    });
    assert.equal(u.inputTokens, 13);
    assert.equal(u.calls, 3);
  });
});

Deno.test("how long a reading waits is the meter's setting, and the notice names the setting", async () => {
  await withConfig(async (config, file) => {
    await writeFile(file, `${assistant("msg_1", "2026-01-01T00:00:01Z", { input_tokens: 1 })}\n`);
    const meter = claudeCodeMeter({
      env: { CLAUDE_CODE_SESSION_ID: SESSION, CLAUDE_CONFIG_DIR: config },
      cwd: "/",
      waitMs: 40,
    })!;
    const never = await meter.read({ through: "toolu_missing" });
    assert.equal(never.notice?.code, "USAGE_PARTIAL");
    assert.match(never.notice!.message, /within 40 ms/);
    assert.match(never.notice!.message, /cost\.transcriptWaitMs/);
    const patient = claudeCodeMeter({
      env: { CLAUDE_CODE_SESSION_ID: SESSION, CLAUDE_CONFIG_DIR: config },
      cwd: "/",
      waitMs: 5_000,
    })!;
    // a line that comes after the default wait is still waited for when the setting allows it
    const late = assistant("msg_2", "2026-01-01T00:00:02Z", { input_tokens: 2 }, "toolu_late");
    const timer = setTimeout(() => appendFile(file, `${late}\n`), TRANSCRIPT_WAIT_MS + 200);
    const reading = await patient.read({ through: "toolu_late" });
    clearTimeout(timer);
    assert.equal(reading.notice, null);
    assert.deepEqual(reading.calls.map((c) => c.id), ["msg_1", "msg_2"]);
  });
});
