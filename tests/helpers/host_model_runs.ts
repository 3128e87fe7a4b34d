/**
 * One host conversation against its own scripted model, and what the host sent: the waymark
 * answers as the model read them, the tool definitions it was offered, the requests of each
 * subagent. Shared by the host tests and the bench's model-side rows.
 * @module
 */
import type { Recorded } from "./model/recording_server.ts";
import { asJson } from "./model/answer_view.ts";
import { responseText } from "./model/gemini_api.ts";
import { connect, ok, tempHome } from "./server.ts";

// deno-lint-ignore no-explicit-any
type Json = Record<string, any>;

/** How Claude Code names waymark's tools: from `setup`'s entry, or from the plugin's server. */
const CLAUDE_WAYMARK_TOOL = /^mcp__(?:plugin_waymark_)?waymark__/;

/** Runs `fn` over `items` with at most `n` at a time, in order of the results. */
export async function pool<T, R>(items: T[], n: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(n, items.length) }, worker));
  return out;
}

/** The text of a tool_result block as the host sent it. */
function resultText(block: Json): string {
  const c = block.content;
  return typeof c === "string"
    ? c
    : (c ?? []).filter((b: Json) => b.type === "text").map((b: Json) => b.text).join("\n");
}

/** Messages API requests that offered waymark's tools (the agent's own turns, not side calls). */
export function agentRequests(requests: readonly Recorded[]): Recorded[] {
  return requests.filter((r) =>
    (r.body.tools ?? []).some((t: Json) => /__start_workflow$/.test(t.name))
  );
}

/** The first user text of a request (tells a main conversation from a subagent's). */
export function firstUserText(r: Recorded): string {
  const m = r.body.messages?.[0];
  if (!m) return "";
  return typeof m.content === "string"
    ? m.content
    : m.content.filter((b: Json) => b.type === "text").map((b: Json) => b.text).join("\n");
}

/** The conversations in the requests: the last request of each, keyed by its first user text. */
export function conversations(requests: readonly Recorded[]): Recorded[] {
  const last = new Map<string, Recorded>();
  for (const r of agentRequests(requests)) last.set(firstUserText(r), r);
  return [...last.values()];
}

/** One waymark call and its answer, as they appear in a conversation. */
export interface Answered {
  /** The tool's name as the host named it. */
  tool: string;
  /** Its input. */
  input: Json;
  /** The answer's text exactly as the model read it. */
  text: string;
  /** The answer parsed as JSON, when the host passed JSON. */
  json: Json | null;
}

/**
 * The waymark calls of a conversation (its last request), in order, with their answers; `tools`
 * picks another server's tools (the bench's WorkRail comparison).
 */
export function answered(request: Recorded, tools: RegExp = CLAUDE_WAYMARK_TOOL): Answered[] {
  const calls = new Map<string, { name: string; input: Json }>();
  const out: Answered[] = [];
  for (const m of request.body.messages ?? []) {
    if (typeof m.content === "string") continue;
    for (const b of m.content) {
      if (b.type === "tool_use") calls.set(b.id, { name: b.name, input: b.input });
      if (b.type === "tool_result") {
        const call = calls.get(b.tool_use_id);
        if (!call || !tools.test(call.name)) continue;
        const text = resultText(b);
        out.push({ tool: call.name, input: call.input, text, json: asJson(text) });
      }
    }
  }
  return out;
}

/** waymark's tool definitions (or another server's) as the host offered them to the model. */
export function waymarkTools(request: Recorded, tools: RegExp = CLAUDE_WAYMARK_TOOL): Json[] {
  return (request.body.tools ?? []).filter((t: Json) => tools.test(t.name));
}

/** Gemini API requests that offered waymark's tools. */
export function geminiAgentRequests(requests: readonly Recorded[]): Recorded[] {
  return requests.filter((r) =>
    (r.body.tools ?? []).some((t: Json) =>
      (t.functionDeclarations ?? []).some((d: Json) => /^mcp_waymark_start_workflow$/.test(d.name))
    )
  );
}

/** waymark's function declarations as Gemini CLI offered them to the model. */
export function geminiWaymarkTools(request: Recorded): Json[] {
  return (request.body.tools ?? []).flatMap((t: Json) => t.functionDeclarations ?? [])
    .filter((d: Json) => /^mcp_waymark_/.test(d.name));
}

/** The waymark calls of a Gemini conversation (its last request), with their answers' text. */
export function geminiAnswered(request: Recorded): Answered[] {
  const calls = new Map<string, { name: string; input: Json }>();
  const out: Answered[] = [];
  for (const c of request.body.contents ?? []) {
    for (const p of c.parts ?? []) {
      if (p.functionCall) {
        calls.set(p.functionCall.id, { name: p.functionCall.name, input: p.functionCall.args });
      }
      if (!p.functionResponse || !/^mcp_waymark_/.test(p.functionResponse.name)) continue;
      const call = calls.get(p.functionResponse.id);
      const text = responseText(p.functionResponse.response);
      out.push({
        tool: p.functionResponse.name,
        input: call?.input ?? {},
        text,
        json: asJson(text),
      });
    }
  }
  return out;
}

/** The bundled workflow ids, as list_workflows gives them (never a hard-coded list). */
export async function bundledIds(): Promise<string[]> {
  const home = await tempHome();
  const client = await connect(home.home);
  try {
    const listed = ok(await client.call("list_workflows", {}));
    return listed.workflows.filter((w: { source: string }) => w.source === "bundled")
      .map((w: { id: string }) => w.id);
  } finally {
    await client.close();
    await home.cleanup();
  }
}

/** The environment variable that asks for the full host sweep (`deno task test:hosts-full`). */
export const HOSTS_FULL_ENV = "WAYMARK_HOSTS_FULL";

/**
 * The bundled workflows a host other than the suite's sweep host walks: all of them under
 * `deno task test:hosts-full`, else the first. Claude Code (the JSON) walks every one in the main
 * suite, and `tests/hosts/renderings_test.ts` drives every one from the text alone (what Gemini
 * CLI hands its model), checking that the text and the JSON of every answer read the same.
 */
export function sampled(ids: string[]): string[] {
  return Deno.env.get(HOSTS_FULL_ENV) === "1" ? ids : ids.slice(0, 1);
}

/** The runs a waymark home holds, as `resume_session` lists them (checked on the server's side). */
export async function runsOf(
  home: string,
): Promise<{ runId: string; status: string; workflowId: string }[]> {
  const client = await connect(home);
  try {
    const found = ok(await client.call("resume_session", { limit: 10 }));
    return found.candidates.map((c: Json) => ({
      runId: c.runId,
      status: c.status,
      workflowId: c.workflowId,
    }));
  } finally {
    await client.close();
  }
}
