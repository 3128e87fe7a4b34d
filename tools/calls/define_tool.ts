/**
 * A tool as one typed definition: its input schema types its handler's input, its output
 * schema types what the handler returns, and the facts the server needs about it (workspace
 * use, idempotency, the flag that lists it) are fields, not lists of names elsewhere.
 * `defineTool` checks the types once and hands the server an untyped face it cannot misuse.
 * @module
 */
import type { z } from "npm:zod@4.6.7";
import type { EngineDeps } from "../../engine/model/ports.ts";
import type { Result } from "../../engine/model/result.ts";
import type { CallOptions } from "../../engine/run/record_attempt.ts";
import { invalidArguments } from "./error_envelope.ts";
import { keepFreeForm, screenArguments } from "./argument_guard.ts";

/**
 * What a tool call knows besides its arguments: the engine's call options, and for a start the
 * key that makes its retry open one run (`replay_key.ts`).
 */
export type ToolContext = CallOptions & { replayKey?: string };

/** A tool as written: its schemas type its handler. */
export interface ToolSpec<In, Out extends Record<string, unknown>> {
  /** Tool name. */
  name: string;
  /** Human title. */
  title: string;
  /** What it does; every backticked field it names exists in its schemas (a test checks). */
  description: string;
  /** Input schema; its output type is the handler's input. */
  input: z.ZodType<In>;
  /** Output schema of a success; its type is what the handler returns. */
  output: z.ZodType<Out>;
  /** Whether the tool only reads (`readOnlyHint`). */
  readOnly: boolean;
  /** Whether repeating a call with the same arguments changes nothing more (`idempotentHint`). */
  idempotent: boolean;
  /** Whether a call may end something for good, e.g. abandon a run (`destructiveHint`). */
  destructive: boolean;
  /**
   * `optional`: a client that asks for a task gets the run the call starts as a task
   * (`execution.taskSupport`); absent, calls always answer at once.
   */
  taskSupport?: "optional";
  /**
   * Before an acknowledgement that would be blocked only on user-only dependencies, ask the
   * user through the client (an elicitation), when it can answer forms.
   */
  elicits?: boolean;
  /** Whether a call needs the client's workspace (read from its roots before the call). */
  workspace: "always" | "never" | ((input: NoInfer<In>) => boolean);
  /** Listed only when this server option is on. */
  flag?: "startSession";
  /** Runs the use-case on validated input, with the request's context. */
  run(deps: EngineDeps, input: NoInfer<In>, ctx: ToolContext): Promise<Result<NoInfer<Out>>>;
  /** Renders a success as text. */
  render(value: NoInfer<Out>): string;
}

/** A successful call: the structured result and its text rendering. */
export interface ToolSuccess {
  /** The result, as `structuredContent`. */
  value: Record<string, unknown>;
  /** The result as text, for `content`. */
  text(): string;
}

/** A call whose arguments passed the argument rules and the input schema, ready to run. */
export interface ToolCall {
  /** The validated input. */
  input: unknown;
  /** Whether this call needs the client's workspace. */
  usesWorkspace: boolean;
  /** Runs the call. */
  run(deps: EngineDeps, ctx?: ToolContext): Promise<Result<ToolSuccess>>;
}

/** A tool as the server sees it: its published facts, and arguments in, a call out. */
export interface ToolDefinition {
  /** Tool name. */
  readonly name: string;
  /** Human title. */
  readonly title: string;
  /** What it does. */
  readonly description: string;
  /** Input schema. */
  readonly input: z.ZodType;
  /** Output schema of a success. */
  readonly output: z.ZodType;
  /** Whether the tool only reads. */
  readonly readOnly: boolean;
  /** Whether repeating a call changes nothing more. */
  readonly idempotent: boolean;
  /** Whether a call may end something for good. */
  readonly destructive: boolean;
  /** Whether a call may answer as a task. */
  readonly taskSupport?: "optional";
  /** Whether an acknowledgement may ask the user first. */
  readonly elicits?: boolean;
  /** Listed only when this server option is on. */
  readonly flag?: "startSession";
  /** Validates arguments: the call, or the `INVALID_ARGUMENTS` error. */
  parse(args: unknown): Result<ToolCall>;
}

/** Types a tool from its schemas and erases the types behind {@linkcode ToolDefinition}. */
export function defineTool<In, Out extends Record<string, unknown>>(
  spec: ToolSpec<In, Out>,
): ToolDefinition {
  const { name, title, description, input, output, readOnly, idempotent, destructive, flag } = spec;
  const usesWorkspace = (args: In): boolean =>
    typeof spec.workspace === "function" ? spec.workspace(args) : spec.workspace === "always";
  return {
    name,
    title,
    description,
    input,
    output,
    readOnly,
    idempotent,
    destructive,
    ...(spec.taskSupport ? { taskSupport: spec.taskSupport } : {}),
    ...(spec.elicits ? { elicits: true } : {}),
    flag,
    parse(args) {
      const refused = screenArguments(name, args);
      if (refused) return { ok: false, error: refused };
      const parsed = input.safeParse(args);
      if (!parsed.success) return { ok: false, error: invalidArguments(name, parsed.error.issues) };
      const data = parsed.data;
      keepFreeForm(data, args);
      return {
        ok: true,
        value: {
          input: data,
          usesWorkspace: usesWorkspace(data),
          async run(deps, ctx = {}) {
            const result = await spec.run(deps, data, ctx);
            if (!result.ok) return result;
            const value = result.value;
            return { ok: true, value: { value, text: () => spec.render(value) } };
          },
        },
      };
    },
  };
}

/** A set of tools served together, with the instructions clients show the model. */
export interface ToolProfile {
  /** Sent at initialize: how to use these tools. */
  instructions: string;
  /** The server's name sent at initialize (`serverInfo.name`); default `waymark`. */
  serverName?: string;
  /** The tools, in the order clients list them. */
  tools: readonly ToolDefinition[];
  /**
   * The tools' published JSON Schemas by name, generated from their zod schemas at build time
   * (`deno task schema`), so `tools/list` converts nothing; a test keeps them equal.
   */
  published?: Readonly<Record<string, PublishedSchemas>>;
}

/** A tool's JSON Schemas as `tools/list` publishes them. */
export interface PublishedSchemas {
  /** Arguments. */
  inputSchema: { type: "object"; [key: string]: unknown };
  /** A success or the error envelope. */
  outputSchema: { type: "object"; [key: string]: unknown };
}
