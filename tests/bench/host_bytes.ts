/**
 * What the model reads, measured through the host: one identical six-step workflow run by the
 * scripted model through real Claude Code (which hands the model waymark's JSON) and real Gemini
 * CLI (which hands it waymark's text), and the bytes the host sent: waymark's tool definitions,
 * each execution answer and its overhead beyond the step's own prompt, the run's answers in all,
 * and the whole conversation (the last request's messages). Given a built WorkRail checkout
 * (`--workrail DIR` or `WAYMARK_BENCH_WORKRAIL`; its public repository, built with
 * `npm ci --ignore-scripts && npx tsc -p tsconfig.build.json`), the same rows for WorkRail's
 * server on the same workflow in Claude Code (its workflow as a user workflow of the host's HOME).
 *
 *   deno run -A tests/bench/host_bytes.ts [--workrail DIR] [--out FILE]
 *   deno task bench --only hosts
 *
 * Targets (reported, never enforced): tool definitions ≤ 5 KB and an answer's overhead ≤ 400 B
 * at the median, in both hosts.
 * @module
 */
import { join } from "node:path";
import { parseArgs } from "node:util";
import {
  agentRequests,
  type Answered,
  answered,
  geminiAgentRequests,
  geminiAnswered,
  geminiWaymarkTools,
  waymarkTools,
} from "../helpers/host_model_runs.ts";
import { hasHost } from "../helpers/hosts.ts";
import { type HostPlace, hostPlace, runClaude, runGemini } from "../helpers/host_run.ts";
import { serveAnthropic } from "../helpers/model/anthropic_api.ts";
import { serveGemini } from "../helpers/model/gemini_api.ts";
import { DONE } from "../helpers/model/diligent.ts";
import type { Target } from "./report.ts";

/** The workflow measured: six plain steps, the same file for every server. */
export const SIX_STEPS = {
  id: "project.six_steps",
  name: "Six steps",
  description: "Six plain steps, for measuring what a model reads per step.",
  version: "1.0.0",
  steps: ["Understand", "Plan", "Implement", "Test", "Review", "Report"].map((title, i) => ({
    id: `step-${i + 1}`,
    title,
    prompt: `${title}: do step ${
      i + 1
    } of the task and record what you did in a short note (two or three sentences).`,
  })),
};

/** Bytes the model read in one host. */
export interface HostBytes {
  /** Which host and rendering. */
  host: string;
  /** waymark's tool definitions as the host sent them (JSON bytes). */
  toolDefinitions: number;
  /** Each execution answer (start, then each acknowledgement), bytes. */
  answers: number[];
  /** Each answer's bytes beyond its step's own prompt. */
  overheads: number[];
  /** All execution answers of the run. */
  runAnswers: number;
  /** The last request's conversation (its messages or contents, JSON bytes). */
  conversation: number;
}

const bytes = (s: string) => new TextEncoder().encode(s).length;

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m]! : Math.round((s[m - 1]! + s[m]!) / 2);
}

/** The step prompts of the workflow, by step id (what an answer carries of the step itself). */
const PROMPTS = new Map(SIX_STEPS.steps.map((s) => [s.id, s.prompt]));

/** An execution answer's step: from the JSON, or the text's header (waymark's or WorkRail's). */
function stepOf(a: Answered): string | undefined {
  return a.json?.pending?.stepId ??
    a.text.match(/^Step `([^`]+)` of |^# .* \(`([^`]+)`\)$|<!-- stepId: (\S+) -->/m)
      ?.slice(1).find(Boolean);
}

function measure(host: string, tools: unknown[], calls: Answered[], conversation: unknown) {
  const steps = calls.filter((c) => /(start|continue)_workflow$/.test(c.tool));
  const answers = steps.map((c) => bytes(c.text));
  const overheads = steps.map((c) => {
    const prompt = PROMPTS.get(stepOf(c) ?? "");
    return bytes(c.text) - (prompt ? bytes(prompt) : 0);
  });
  return {
    host,
    toolDefinitions: bytes(JSON.stringify(tools)),
    answers,
    overheads,
    runAnswers: answers.reduce((a, b) => a + b, 0),
    conversation: bytes(JSON.stringify(conversation)),
  };
}

async function writeWorkflow(place: HostPlace): Promise<void> {
  const dir = join(place.workspace, ".waymark", "workflows");
  await Deno.mkdir(dir, { recursive: true });
  await Deno.writeTextFile(join(dir, "six_steps.json"), JSON.stringify(SIX_STEPS, null, 2));
}

const TASK = `Run the waymark workflow \`${SIX_STEPS.id}\` to completion.`;

/** Runs the six steps through Claude Code and measures what its model read. */
async function throughClaude(place: HostPlace): Promise<HostBytes> {
  const model = serveAnthropic();
  try {
    const out = await runClaude(place, { prompt: TASK, modelUrl: model.url });
    if (!out.stdout.includes(DONE)) throw new Error(`claude did not finish: ${out.stderr}`);
    const last = agentRequests(model.requests).at(-1)!;
    return measure(
      "Claude Code (JSON)",
      waymarkTools(last),
      answered(last),
      last.body.messages,
    );
  } finally {
    await model.close();
  }
}

/** Runs the six steps through Gemini CLI and measures what its model read. */
async function throughGemini(place: HostPlace): Promise<HostBytes> {
  const model = serveGemini();
  try {
    const out = await runGemini(place, { prompt: TASK, modelUrl: model.url });
    if (!out.stdout.includes(DONE)) throw new Error(`gemini did not finish: ${out.stderr}`);
    const last = geminiAgentRequests(model.requests).at(-1)!;
    return measure(
      "Gemini CLI (text)",
      geminiWaymarkTools(last),
      geminiAnswered(last),
      last.body.contents,
    );
  } finally {
    await model.close();
  }
}

/** The six steps through Claude Code with WorkRail's server (built at `dir`) instead of waymark. */
async function workrailThroughClaude(place: HostPlace, dir: string): Promise<HostBytes> {
  const workflows = join(place.home, ".workrail", "workflows");
  await Deno.mkdir(workflows, { recursive: true });
  await Deno.writeTextFile(join(workflows, "six_steps.json"), JSON.stringify(SIX_STEPS, null, 2));
  const config = join(place.home, "workrail.mcp.json");
  const server = { command: "node", args: [join(dir, "dist", "mcp-server.js")] };
  await Deno.writeTextFile(config, JSON.stringify({ mcpServers: { workrail: server } }));
  const model = serveAnthropic();
  try {
    const out = await runClaude(place, {
      prompt: TASK.replace("waymark workflow", "WorkRail workflow"),
      modelUrl: model.url,
      args: ["--mcp-config", config, "--strict-mcp-config"],
      allow: ["mcp__workrail"],
    });
    if (!out.stdout.includes(DONE)) throw new Error(`WorkRail did not finish: ${out.stdout}`);
    const tools = /^mcp__workrail__/;
    const last = model.requests.filter((r) =>
      (r.body.tools ?? []).some((t: { name: string }) => tools.test(t.name))
    ).at(-1)!;
    return measure(
      "WorkRail in Claude Code",
      waymarkTools(last, tools),
      answered(last, tools),
      last.body.messages,
    );
  } finally {
    await model.close();
  }
}

/** The model-side rows of both hosts, and WorkRail's when given a built checkout. */
export async function hostBytesBench(
  options: { log: (line: string) => void; workrail?: string },
): Promise<HostBytes[]> {
  if (!hasHost("claude") || !hasHost("gemini")) {
    throw new Error("the hosts are not installed: deno run -A tests/helpers/hosts.ts install");
  }
  const place = await hostPlace("claude-code", "gemini");
  try {
    await writeWorkflow(place);
    options.log("hosts: six steps through Claude Code");
    const claude = await throughClaude(place);
    options.log("hosts: six steps through Gemini CLI");
    const gemini = await throughGemini(place);
    if (!options.workrail) return [claude, gemini];
    options.log(`hosts: six steps through Claude Code with WorkRail (${options.workrail})`);
    return [claude, gemini, await workrailThroughClaude(place, options.workrail)];
  } finally {
    await place.cleanup();
  }
}

/** The two targets per host: tool definitions and the median answer overhead. */
export function hostTargets(rows: readonly HostBytes[]): Target[] {
  return rows.filter((r) => !r.host.startsWith("WorkRail")).flatMap((r) => [
    {
      measure: `${r.host}: waymark tool definitions`,
      value: r.toolDefinitions,
      unit: "bytes" as const,
      target: 5_000,
      met: r.toolDefinitions <= 5_000,
    },
    {
      measure: `${r.host}: answer overhead beyond the step's prompt (median)`,
      value: median(r.overheads),
      unit: "bytes" as const,
      target: 400,
      met: median(r.overheads) <= 400,
    },
  ]);
}

/** The rows as a table. */
export function hostBytesReport(rows: readonly HostBytes[]): string {
  const n = (x: number) => x.toLocaleString("en-US").padStart(8);
  const lines = [
    "What the model reads (six-step workflow through the real host, scripted model), bytes:",
    `  ${"host".padEnd(24)} ${"tools".padStart(8)} ${"answer p50".padStart(10)} ${
      "overhead p50".padStart(12)
    } ${"run answers".padStart(11)} ${"conversation".padStart(12)}`,
  ];
  for (const r of rows) {
    lines.push(
      `  ${r.host.padEnd(24)} ${n(r.toolDefinitions)} ${n(median(r.answers)).padStart(10)} ${
        n(median(r.overheads)).padStart(12)
      } ${n(r.runAnswers).padStart(11)} ${n(r.conversation).padStart(12)}`,
      `    answers: ${r.answers.join(", ")}; overheads: ${r.overheads.join(", ")}`,
    );
  }
  return lines.join("\n");
}

/** The rows as JSON, with their medians. */
export function hostBytesJson(rows: readonly HostBytes[]): Record<string, unknown>[] {
  return rows.map((r) => ({
    ...r,
    answerMedian: median(r.answers),
    overheadMedian: median(r.overheads),
  }));
}

if (import.meta.main) {
  const { values } = parseArgs({
    args: Deno.args,
    options: { out: { type: "string" }, workrail: { type: "string" } },
  });
  const log = (line: string) => console.error(`[bench] ${line}`);
  const workrail = values.workrail ?? Deno.env.get("WAYMARK_BENCH_WORKRAIL");
  const rows = await hostBytesBench({ log, workrail });
  console.log(hostBytesReport(rows));
  for (const t of hostTargets(rows)) {
    console.log(`  ${t.measure}: ${t.value} B (≤ ${t.target} B) ${t.met ? "MET" : "NOT MET"}`);
  }
  if (values.out) {
    await Deno.writeTextFile(values.out, JSON.stringify(hostBytesJson(rows), null, 2));
  }
}
