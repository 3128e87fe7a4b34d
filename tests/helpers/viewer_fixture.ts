/**
 * Sessions for the viewer's tests and bench, written through the real use-cases: either
 * in-process (`openWaymark`) or through an MCP client talking to a server process.
 * @module
 */
import type { Waymark } from "../../mod.ts";
import { dbArgs, MAIN, ok, ROOT, type TestClient } from "./server.ts";
import { keepSession, placeOf } from "./answers.ts";

/** The fields of a step response the fixtures use. */
export interface Step {
  stateToken: string;
  ackToken?: string;
  checkpointToken: string;
  session?: { sessionId: string; runId: string; nodeId: string };
  checkpoint?: { nodeId: string };
}

/** The three execution calls, over whichever transport. */
export interface Driver {
  start(args: Record<string, unknown>): Promise<Step>;
  continue(args: Record<string, unknown>): Promise<Step>;
  checkpoint(args: Record<string, unknown>): Promise<Step>;
}

/** A driver over an in-process waymark. */
export function inProcess(waymark: Waymark): Driver {
  const unwrap = (result: { ok: boolean; value?: unknown; error?: { message: string } }) => {
    if (!result.ok) throw new Error(result.error?.message);
    return result.value as Step;
  };
  return {
    start: async (args) => unwrap(await waymark.start(args as never)),
    continue: async (args) => unwrap(await waymark.continue(args as never)),
    checkpoint: async (args) => unwrap(await waymark.checkpoint(args as never)),
  };
}

/** A driver over an MCP client (a real server process). */
export function overMcp(client: TestClient): Driver {
  return {
    start: async (args) => ok(await client.call("start_workflow", args)) as Step,
    continue: async (args) => ok(await client.call("continue_workflow", args)) as Step,
    checkpoint: async (args) => ok(await client.call("checkpoint_workflow", args)) as Step,
  };
}

/** Advances a step with notes (and artifacts); the answer keeps the session of `at`. */
export async function advance(
  driver: Driver,
  at: Step,
  notesMarkdown?: string,
  artifacts?: Record<string, unknown>[],
): Promise<Step> {
  const next = await driver.continue({
    stateToken: at.stateToken,
    ackToken: at.ackToken,
    ...(notesMarkdown || artifacts ? { output: { notesMarkdown, artifacts } } : {}),
  });
  return keepSession(next, at);
}

/** Hex ids of a session's parts (the viewer's URLs take `ses_`/`run_` forms too). */
export function ids(step: Step): { sessionId: string; runId: string; nodeId: string } {
  return {
    sessionId: step.session!.sessionId.replace(/^ses_/, ""),
    runId: placeOf(step).runId.replace(/^run_/, ""),
    nodeId: placeOf(step).nodeId,
  };
}

/** What {@linkcode seedForkedReview} made. */
export interface ForkedReview {
  sessionId: string;
  runId: string;
  /** The node both branches leave from. */
  forkNodeId: string;
  /** Tip of the first (older) branch. */
  oldTip: Step;
  /** Tip of the newer branch: the preferred one. */
  newTip: Step;
  /** The checkpoint on the first branch. */
  checkpointNodeId: string;
  /** A node whose notes are known. */
  notedNodeId: string;
  /** Those notes' distinctive text. */
  notedText: string;
}

/** A code review with notes, an artifact, a checkpoint and a fork (a rewind from step 1). */
export async function seedForkedReview(driver: Driver): Promise<ForkedReview> {
  const s0 = await driver.start({
    workflowId: "waymark.code_review",
    goal: "Review PR #42: retry logic in the uploader",
    context: { changeSize: "medium", prUrl: "https://example.com/pr/42" },
  });
  const s1 = await advance(
    driver,
    s0,
    "## Intent\nRetries failed uploads with **exponential backoff**.\n\n- base `a1b2c3`, head `d4e5f6`\n- out of scope: the CLI",
    [{ kind: "diff_range", base: "a1b2c3", head: "d4e5f6" }],
  );
  const notedText = "Mapped 7 files; the risky one is uploader/retry.ts";
  const s2 = await advance(driver, s1, `${notedText}.\n\nCallers: \`sync.ts\`, \`cli.ts\`.`);
  const cp = await driver.checkpoint({
    stateToken: s2.stateToken,
    checkpointToken: s2.checkpointToken,
    output: { notesMarkdown: "Checkpoint: halfway through the file map; nothing blocking yet." },
  });
  const s3 = await advance(
    driver,
    cp,
    "Correctness: the retry loop never gives up on 4xx. **Major.**",
  );
  // the chat was rewound to step 1: a fresh ack on s1 starts a sibling branch
  const again = await driver.continue({ stateToken: s1.stateToken });
  const b2 = await advance(
    driver,
    again,
    "After the rewind: mapped only the uploader; the CLI change was split out.",
  );
  const b3 = await advance(driver, b2, "Correctness (second pass): 4xx now stops the retries.");
  const { sessionId, runId } = ids(s0);
  return {
    sessionId,
    runId,
    forkNodeId: placeOf(s1).nodeId,
    oldTip: s3,
    newTip: b3,
    checkpointNodeId: cp.checkpoint?.nodeId ?? placeOf(cp).nodeId,
    notedNodeId: placeOf(s2).nodeId,
    notedText,
  };
}

/** Notes, titles, context and artifacts that try to run script in the viewer. */
export const HOSTILE = {
  goal: `<script>window.__xss = "title"</script><img src=x onerror="window.__xss='title-img'">`,
  notes: [
    `<script>window.__xss = "script"; console.log("XSS-RAN")</script>`,
    `[click me](javascript:window.__xss='link') and [also](JAVASCRIPT:alert(1))`,
    `<img src=x onerror="window.__xss='img'"> <a href="javascript:alert(1)" onclick="window.__xss='a'">a</a>`,
    `<svg onload="window.__xss='svg'"></svg> <iframe src="javascript:alert(1)"></iframe>`,
    `<details open ontoggle="window.__xss='details'">x</details> [data](data:text/html,<script>alert(1)</script>)`,
    "```html\n<script>window.__xss='code'</script>\n```",
  ].join("\n\n"),
  artifact: {
    kind: `<script>window.__xss='artifact'</script>`,
    html: `<img src=x onerror="window.__xss='artifact-img'">`,
  },
  context: {
    changeSize: "small",
    prUrl: `javascript:window.__xss='prompt' <img src=x onerror="window.__xss='prompt-img'">`,
  },
};

/** A session whose every agent-written field is hostile. */
export async function seedHostile(
  driver: Driver,
): Promise<{ sessionId: string; runId: string; nodeId: string }> {
  const s0 = await driver.start({
    workflowId: "waymark.code_review",
    goal: HOSTILE.goal,
    context: HOSTILE.context,
  });
  const s1 = await advance(driver, s0, HOSTILE.notes, [HOSTILE.artifact]);
  await driver.checkpoint({
    stateToken: s1.stateToken,
    checkpointToken: s1.checkpointToken,
    output: { notesMarkdown: HOSTILE.notes },
  });
  return ids(s1);
}

/** A `waymark view` process. */
export interface ViewProcess {
  /** `http://127.0.0.1:PORT/`. */
  url: string;
  /** The port. */
  port: number;
  /** Stops it (SIGTERM) and returns its exit code and stderr. */
  stop(): Promise<{ code: number; stderr: string }>;
}

/** Spawns `waymark view --port 0` on a home and waits for the URL it prints on stdout. */
export async function spawnView(home: string): Promise<ViewProcess> {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", "--quiet", MAIN, "view", "--home", home, ...dbArgs(home), "--port", "0"],
    cwd: ROOT,
    stdin: "null",
    stdout: "piped",
    stderr: "piped",
    env: { NO_COLOR: "1" },
  }).spawn();
  const stderrText = new Response(child.stderr).text();
  const reader = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
  let out = "";
  const deadline = Date.now() + 60_000;
  while (!/waymark viewer: (http:\/\/127\.0\.0\.1:\d+\/)\n/.test(out)) {
    if (Date.now() > deadline) throw new Error(`waymark view printed no URL: ${out}`);
    const { value, done } = await reader.read();
    if (done) throw new Error(`waymark view exited: ${out}\n${await stderrText}`);
    out += value;
  }
  reader.releaseLock();
  const drained = child.stdout.cancel().catch(() => {});
  const url = /waymark viewer: (http:\/\/127\.0\.0\.1:\d+\/)/.exec(out)![1]!;
  return {
    url,
    port: Number(new URL(url).port),
    async stop() {
      child.kill("SIGTERM");
      const status = await child.status;
      await drained;
      return { code: status.code, stderr: await stderrText };
    },
  };
}

/** Sends one raw HTTP/1.1 request over TCP (any Host header) and returns the status line. */
export async function rawRequest(port: number, request: string): Promise<string> {
  const conn = await Deno.connect({ hostname: "127.0.0.1", port });
  try {
    await conn.write(new TextEncoder().encode(request));
    const buf = new Uint8Array(4096);
    let text = "";
    while (!text.includes("\r\n")) {
      const n = await conn.read(buf);
      if (n === null) break;
      text += new TextDecoder().decode(buf.subarray(0, n));
    }
    return text.split("\r\n")[0]!;
  } finally {
    conn.close();
  }
}
