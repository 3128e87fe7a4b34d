/**
 * What a model reads of waymark, per host, computed from the MCP wire as each host transforms
 * it (`host_views.ts`): the tool definitions of the default profile, and every answer of a
 * scripted walk of each bundled workflow (start and each acknowledgement, a rehydrate halfway),
 * as the JSON of its structured content (Claude Code) and as its text (Gemini CLI), with each
 * answer's overhead beyond its pending step's own prompt. Medians are what the targets use.
 *
 *   deno run -A tests/bench/model_bench.ts           print the rows
 *   deno run -A tests/bench/model_bench.ts --json    print them as JSON
 * @module
 */
import { connect, ok, tempHome, type TestClient } from "../helpers/server.ts";
import { BUNDLED_IDS } from "../helpers/library.ts";
import { walkWorkflow } from "../helpers/mcp_agent.ts";
import { stats } from "./common.ts";
import {
  answerBytes,
  type ListedTool,
  type ToolAnswer,
  toolDefinitionBytes,
} from "./host_views.ts";

/** What a model reads, in bytes (medians over the walks' answers). */
export interface ModelBytes {
  /** Tool definitions as Claude Code sends them. */
  claudeTools: number;
  /** Function declarations as Gemini CLI sends them. */
  geminiTools: number;
  /** The bytes of `tools/list` itself (what a client reads). */
  toolsList: number;
  /** Answers measured. */
  answers: number;
  /** Median JSON of structured content, and its overhead beyond the prompt. */
  json: number;
  /** Median overhead of the JSON beyond the pending prompt. */
  jsonOverhead: number;
  /** Median text. */
  text: number;
  /** Median overhead of the text beyond the pending prompt. */
  textOverhead: number;
  /** Median of a rehydrate's JSON and text overhead (its recap included). */
  rehydrate: { jsonOverhead: number; textOverhead: number };
  /** Whole walks: the sum of every answer, JSON and text (all bundled workflows). */
  total: { json: number; text: number };
}

/** A client that keeps every execution answer it receives. */
function recording(c: TestClient, answers: ToolAnswer[]): TestClient {
  return {
    ...c,
    async call(name, args) {
      const result = await c.call(name, args);
      const execution = name === "start_workflow" ||
        (name === "continue_workflow" && "ackToken" in args);
      if (execution && !result.isError) answers.push(result as ToolAnswer);
      return result;
    },
  };
}

/** Walks every bundled workflow once over a fresh stdio server and measures what a model reads. */
export async function modelBytes(): Promise<ModelBytes> {
  const home = await tempHome();
  const client = await connect(home.home);
  try {
    const listed = await client.listTools();
    const toolsList = new TextEncoder().encode(JSON.stringify(listed)).length;
    const tools = toolDefinitionBytes(listed.tools as ListedTool[]);
    const answers: ToolAnswer[] = [];
    const rehydrates: ToolAnswer[] = [];
    const c = recording(client, answers);
    for (const id of BUNDLED_IDS) {
      const before = answers.length;
      await walkWorkflow(c, id, { variant: 0 });
      const mid = answers[before + Math.floor((answers.length - before) / 2)]!;
      const stateToken = (mid.structuredContent as { stateToken: string }).stateToken;
      const again = await client.call("continue_workflow", { stateToken });
      ok(again);
      rehydrates.push(again as ToolAnswer);
    }
    const sizes = answers.map(answerBytes);
    const median = (k: keyof ReturnType<typeof answerBytes>, of = sizes) =>
      stats(of.map((s) => s[k])).p50;
    const rehydrated = rehydrates.map(answerBytes);
    return {
      claudeTools: tools.claude,
      geminiTools: tools.gemini,
      toolsList,
      answers: sizes.length,
      json: median("json"),
      jsonOverhead: median("jsonOverhead"),
      text: median("text"),
      textOverhead: median("textOverhead"),
      rehydrate: {
        jsonOverhead: median("jsonOverhead", rehydrated),
        textOverhead: median("textOverhead", rehydrated),
      },
      total: {
        json: sizes.reduce((n, s) => n + s.json, 0),
        text: sizes.reduce((n, s) => n + s.text, 0),
      },
    };
  } finally {
    await client.close();
    await home.cleanup();
  }
}

/** The rows of a model scenario, as the report prints them. */
export function modelReport(m: ModelBytes): string {
  const n = (v: number) => `${Math.round(v).toLocaleString("en-US")} B`;
  return [
    `what a model reads (${m.answers} answers of a walk of every bundled workflow; medians):`,
    `  tool definitions, Claude Code     ${n(m.claudeTools)}`,
    `  tool definitions, Gemini CLI      ${n(m.geminiTools)}`,
    `  tools/list                        ${n(m.toolsList)}`,
    `  answer, JSON (Claude Code)        ${n(m.json)}, beyond the prompt ${n(m.jsonOverhead)}`,
    `  answer, text (Gemini CLI)         ${n(m.text)}, beyond the prompt ${n(m.textOverhead)}`,
    `  rehydrate, beyond the prompt      ${n(m.rehydrate.jsonOverhead)} JSON, ${
      n(m.rehydrate.textOverhead)
    } text`,
    `  every walk's answers              ${n(m.total.json)} JSON, ${n(m.total.text)} text`,
  ].join("\n");
}

if (import.meta.main) {
  const measured = await modelBytes();
  console.log(
    Deno.args.includes("--json") ? JSON.stringify(measured, null, 2) : modelReport(measured),
  );
}
