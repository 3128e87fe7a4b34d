/**
 * A scripted stand-in for the Anthropic Messages API on loopback, for driving a real Claude Code:
 * `POST /v1/messages` (streaming SSE and not), `POST /v1/messages/count_tokens` and
 * `GET /v1/models`. Every request is recorded as the host sent it. A request that offers
 * waymark's tools is answered by the diligent agent (`diligent.ts`) from its conversation; a side
 * call without them (a title, a summary for compaction) gets a short plain answer.
 * @module
 */
import { type Call, type HostTools, type Move, nextMove, type Turn } from "./diligent.ts";
import { type ModelServer, serveRecording } from "./recording_server.ts";

// deno-lint-ignore no-explicit-any
type Json = Record<string, any>;

/** The summary the stand-in writes when the host compacts: it keeps no token on purpose. */
export const COMPACT_SUMMARY =
  "Summary: the user asked to run a waymark workflow; some steps were acknowledged. (No tokens kept.)";

const blocks = (content: unknown): Json[] =>
  typeof content === "string" ? [{ type: "text", text: content }] : (content as Json[]) ?? [];

const text = (content: unknown): string =>
  typeof content === "string"
    ? content
    : blocks(content).filter((b) => b.type === "text").map((b) => b.text).join("\n");

/** Names of the host's tools the agent maps its moves to. */
interface Names {
  waymark: string;
  delegate?: string;
  shell?: string;
}

function toolNames(tools: Json[]): Names | null {
  const start = tools.find((t) => /(^|__)start_workflow$/.test(t.name));
  if (!start) return null;
  const names = new Set(tools.map((t) => t.name as string));
  return {
    waymark: start.name.slice(0, -"start_workflow".length),
    delegate: ["Agent", "Task"].find((n) => names.has(n)),
    shell: names.has("Bash") ? "Bash" : undefined,
  };
}

function neutralName(name: string, names: Names): string {
  if (name === names.delegate) return "delegate";
  if (name === names.shell) return "shell";
  return name.startsWith(names.waymark) ? name.slice(names.waymark.length) : name;
}

/** The host's conversation in the agent's shape. */
export function transcriptOf(body: Json, names: Names): Turn[] {
  const turns: Turn[] = [];
  for (const m of body.messages ?? []) {
    const parts = blocks(m.content);
    if (m.role === "assistant") {
      const calls: Call[] = parts.filter((b) => b.type === "tool_use").map((b) => ({
        id: b.id,
        name: neutralName(b.name, names),
        input: b.input ?? {},
      }));
      turns.push({ role: "model", text: text(parts), calls });
      continue;
    }
    const results = parts.filter((b) => b.type === "tool_result");
    if (results.length) {
      turns.push({
        role: "results",
        results: results.map((r) => ({ id: r.tool_use_id, text: text(r.content) })),
      });
    }
    const said = text(parts);
    if (said) turns.push({ role: "user", text: said });
  }
  return turns;
}

let counter = 0;

/** The assistant content for a move, in the host's names. */
function contentOf(move: Move, names: Names | null): Json[] {
  if ("text" in move) return [{ type: "text", text: move.text }];
  return move.calls.map((c) => {
    const id = `toolu_${(++counter).toString().padStart(8, "0")}`;
    if (c.name === "delegate") {
      return {
        type: "tool_use",
        id,
        name: names!.delegate!,
        input: { ...c.input, subagent_type: "general-purpose" },
      };
    }
    if (c.name === "shell") return { type: "tool_use", id, name: names!.shell!, input: c.input };
    return { type: "tool_use", id, name: `${names!.waymark}${c.name}`, input: c.input };
  });
}

/**
 * Fills `workspacePath` where a tool requires it (WorkRail's tools, for the bench's comparison)
 * with the working directory the host tells the model.
 */
function withWorkspace(content: Json[], body: Json): Json[] {
  const required = new Map<string, string[]>(
    (body.tools ?? []).map((t: Json) => [t.name, t.input_schema?.required ?? []]),
  );
  const cwd = JSON.stringify(body.messages ?? []).match(/Primary working directory: ([^\\\s]+)/)
    ?.[1];
  return content.map((b) =>
    b.type === "tool_use" && cwd && required.get(b.name)?.includes("workspacePath") &&
      b.input.workspacePath === undefined
      ? { ...b, input: { ...b.input, workspacePath: cwd } }
      : b
  );
}

/** The host's tool that waits for MCP servers still connecting. */
const WAIT_TOOL = "WaitForMcpServers";

/**
 * A conversation about waymark whose request does not offer waymark's tools yet (the server is
 * still starting, which a loaded machine makes slow): wait for it with the host's tool, as a
 * model told "still connecting" would, a few times at most.
 */
function waitMove(body: Json): Json[] | null {
  const tools = (body.tools ?? []) as Json[];
  // a compaction turn is text only, whatever is still connecting
  if (compacting(body) || !tools.some((t) => t.name === WAIT_TOOL)) return null;
  const said = (body.messages ?? []).map((m: Json) => JSON.stringify(m.content)).join("\n");
  if (!/waymark|dlg1_|st1_/.test(said)) return null;
  const waits = said.split(`"name":"${WAIT_TOOL}"`).length - 1;
  if (waits >= 3) return [{ type: "text", text: "waymark's tools never became available." }];
  const id = `toolu_${(++counter).toString().padStart(8, "0")}`;
  // no `servers`: wait for every pending one (a plugin's server is named `plugin:waymark:waymark`)
  return [{ type: "tool_use", id, name: WAIT_TOOL, input: {} }];
}

/** Whether the host asks for a summary to compact the conversation into (a text-only turn). */
function compacting(body: Json): boolean {
  // the instruction is the last user turn; the host may append a reminder of its own after it
  const last = (body.messages ?? []).findLast((m: Json) => m.role === "user");
  return last !== undefined && /Respond with TEXT ONLY|<summary>/.test(text(last.content));
}

/** What the stand-in answers a messages request with. */
function decide(body: Json): Move {
  if (compacting(body)) return { text: COMPACT_SUMMARY };
  const names = toolNames(body.tools ?? []);
  if (!names) {
    const all = `${JSON.stringify(body.system ?? "")}${text(body.messages?.at(-1)?.content)}`;
    return { text: /summar/i.test(all) ? COMPACT_SUMMARY : "Waymark run" };
  }
  const host: HostTools = { delegate: names.delegate !== undefined, shell: !!names.shell };
  return nextMove(transcriptOf(body, names), host);
}

function message(body: Json, content: Json[]): Json {
  const usage = { input_tokens: Math.ceil(JSON.stringify(body).length / 4), output_tokens: 20 };
  return {
    id: `msg_${(++counter).toString().padStart(8, "0")}`,
    type: "message",
    role: "assistant",
    model: body.model ?? "claude-stand-in",
    content,
    stop_reason: content.some((b) => b.type === "tool_use") ? "tool_use" : "end_turn",
    stop_sequence: null,
    usage,
  };
}

/** The SSE stream of a message: start, each block (text or tool input as one delta), stop. */
function stream(msg: Json): string {
  const ev = (type: string, data: Json) =>
    `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;
  let out = ev("message_start", {
    message: { ...msg, content: [], stop_reason: null, usage: { ...msg.usage, output_tokens: 1 } },
  });
  msg.content.forEach((b: Json, index: number) => {
    if (b.type === "text") {
      out += ev("content_block_start", { index, content_block: { type: "text", text: "" } });
      out += ev("content_block_delta", { index, delta: { type: "text_delta", text: b.text } });
    } else {
      out += ev("content_block_start", {
        index,
        content_block: { type: "tool_use", id: b.id, name: b.name, input: {} },
      });
      out += ev("content_block_delta", {
        index,
        delta: { type: "input_json_delta", partial_json: JSON.stringify(b.input) },
      });
    }
    out += ev("content_block_stop", { index });
  });
  out += ev("message_delta", {
    delta: { stop_reason: msg.stop_reason, stop_sequence: null },
    usage: { output_tokens: msg.usage.output_tokens },
  });
  return out + ev("message_stop", {});
}

const MODELS = ["claude-opus-5-5", "claude-sonnet-5", "claude-haiku-5"];

/** Starts the stand-in on a free loopback port. */
export function serveAnthropic(): ModelServer {
  return serveRecording((record, raw) => {
    const { body } = record;
    const path = record.path.split("?")[0]!;
    if (path === "/v1/messages/count_tokens") {
      return Response.json({ input_tokens: Math.ceil(raw.length / 4) });
    }
    if (path.startsWith("/v1/models")) {
      const data = MODELS.map((id) => ({
        type: "model",
        id,
        display_name: id,
        created_at: "2026-01-01T00:00:00Z",
      }));
      return Response.json({ data, has_more: false, first_id: MODELS[0], last_id: MODELS.at(-1) });
    }
    if (path !== "/v1/messages") {
      const error = { type: "not_found_error", message: path };
      return Response.json({ type: "error", error }, { status: 404 });
    }
    const waiting = toolNames(body.tools ?? []) ? null : waitMove(body);
    if (!waiting) record.answer = decide(body);
    const content = waiting ?? contentOf(record.answer!, toolNames(body.tools ?? []));
    const msg = message(body, withWorkspace(content, body));
    if (!body.stream) return Response.json(msg);
    return new Response(stream(msg), {
      headers: { "content-type": "text/event-stream", "cache-control": "no-cache" },
    });
  });
}
