/**
 * A scripted stand-in for the Gemini API on loopback, for driving a real Gemini CLI
 * (`GOOGLE_GEMINI_BASE_URL`): `models/*:generateContent`, `:streamGenerateContent` (SSE) and
 * `:countTokens`. Requests that offer waymark's tools are answered by the same diligent agent as
 * Claude Code's stand-in; the CLI's own side calls (JSON-schema calls such as routing or
 * next-speaker checks) get a short answer of the shape they ask for.
 * @module
 */
import { type ModelServer, serveRecording } from "./recording_server.ts";
import { type Call, type Move, nextMove, type Turn } from "./diligent.ts";

// deno-lint-ignore no-explicit-any
type Json = Record<string, any>;

function declarations(body: Json): Json[] {
  return (body.tools ?? []).flatMap((t: Json) => t.functionDeclarations ?? []);
}

/** The prefix Gemini CLI gives waymark's tools (empty when it uses the bare names). */
function waymarkPrefix(body: Json): string | null {
  const start = declarations(body).find((d) => /start_workflow$/.test(d.name));
  return start ? start.name.slice(0, -"start_workflow".length) : null;
}

/** The text a function response carries (the CLI wraps MCP content in its own object). */
export function responseText(response: unknown): string {
  if (typeof response === "string") return response;
  if (Array.isArray(response)) return response.map(responseText).filter(Boolean).join("\n");
  if (response && typeof response === "object") {
    const r = response as Json;
    if (typeof r.text === "string") return r.text;
    if (typeof r.output === "string") return r.output;
    return Object.values(r).map(responseText).filter(Boolean).join("\n");
  }
  return "";
}

/** The CLI's conversation in the agent's shape. */
export function geminiTranscript(body: Json, prefix: string): Turn[] {
  const turns: Turn[] = [];
  let n = 0;
  const pendingIds: string[] = [];
  const strip = (name: string) => name.startsWith(prefix) ? name.slice(prefix.length) : name;
  for (const c of body.contents ?? []) {
    const parts = (c.parts ?? []) as Json[];
    const text = parts.filter((p) => typeof p.text === "string" && !p.thought).map((p) => p.text)
      .join("\n");
    if (c.role === "model") {
      const calls: Call[] = parts.filter((p) => p.functionCall).map((p) => {
        const id = p.functionCall.id ?? `call_${n++}`;
        pendingIds.push(id);
        return { id, name: strip(p.functionCall.name), input: p.functionCall.args ?? {} };
      });
      turns.push({ role: "model", text, calls });
      continue;
    }
    const responses = parts.filter((p) => p.functionResponse);
    if (responses.length) {
      turns.push({
        role: "results",
        results: responses.map((p) => ({
          id: p.functionResponse.id ?? pendingIds.shift() ?? "",
          text: responseText(p.functionResponse.response),
        })),
      });
    }
    if (text) turns.push({ role: "user", text });
  }
  return turns;
}

/** A side call's answer: JSON of the shape its schema asks for, or a word. */
function sideAnswer(body: Json): string {
  const schema = body.generationConfig?.responseJsonSchema ?? body.generationConfig?.responseSchema;
  if (!schema) return "OK";
  const props = Object.keys(schema.properties ?? {});
  const out: Json = {};
  for (const p of props) {
    const prop = schema.properties[p];
    const type = String(prop.type ?? "string").toLowerCase();
    out[p] = prop.enum?.at(-1) ??
      (type === "boolean" ? false : type === "number" || type === "integer" ? 1 : "user");
  }
  return JSON.stringify(out);
}

function partsOf(move: Move, prefix: string): Json[] {
  if ("text" in move) return [{ text: move.text }];
  return move.calls.map((c) => ({ functionCall: { name: `${prefix}${c.name}`, args: c.input } }));
}

function candidate(parts: Json[]): Json {
  return {
    candidates: [{ content: { role: "model", parts }, finishReason: "STOP", index: 0 }],
    usageMetadata: { promptTokenCount: 100, candidatesTokenCount: 20, totalTokenCount: 120 },
    modelVersion: "gemini-stand-in",
  };
}

/** Starts the Gemini API stand-in on a free loopback port. */
export function serveGemini(): ModelServer {
  return serveRecording((record, raw) => {
    const { body } = record;
    const path = record.path.split("?")[0]!;
    if (path.endsWith(":countTokens")) {
      return Response.json({ totalTokens: Math.ceil(raw.length / 4) });
    }
    if (!/:(stream)?[gG]enerateContent$/.test(path)) {
      const error = { code: 404, message: path, status: "NOT_FOUND" };
      return Response.json({ error }, { status: 404 });
    }
    const prefix = waymarkPrefix(body);
    let parts: Json[];
    if (prefix === null) parts = [{ text: sideAnswer(body) }];
    else {
      record.answer = nextMove(geminiTranscript(body, prefix), { delegate: false, shell: false });
      parts = partsOf(record.answer, prefix);
    }
    const payload = candidate(parts);
    if (!path.endsWith(":streamGenerateContent")) return Response.json(payload);
    return new Response(`data: ${JSON.stringify(payload)}\n\n`, {
      headers: { "content-type": "text/event-stream" },
    });
  });
}
