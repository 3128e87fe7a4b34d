/**
 * What a request says about its client: whether it speaks the 2026-07-28 revision (a
 * per-request `_meta` envelope) or a 2025 one (an `initialize` handshake), the capabilities it
 * declared (per request, or at initialize), whether it takes answers as tasks, and whether it
 * can ask its user a form.
 * @module
 */
import {
  CLIENT_CAPABILITIES_META_KEY,
  type ClientCapabilities,
  type Server,
  type ServerContext,
} from "npm:@modelcontextprotocol/server@2.4.0";
import { TASKS_EXTENSION } from "./task_wire.ts";

/** The 2025 revision that brought tasks (their 2025-11-25 design). */
const LEGACY_TASKS_VERSION = "2025-11-25";

/** Whether the request came on the 2026-07-28 revision (it carries the `_meta` envelope). */
export function isModern(ctx: ServerContext): boolean {
  return ctx.mcpReq.envelope !== undefined;
}

/** The client's capabilities: the request's own on 2026-07-28, the initialize ones before. */
export function clientCapabilities(
  server: Server,
  ctx: ServerContext,
): ClientCapabilities | undefined {
  if (!isModern(ctx)) return server.getClientCapabilities();
  const envelope = ctx.mcpReq.envelope as Record<string, unknown>;
  return envelope[CLIENT_CAPABILITIES_META_KEY] as ClientCapabilities | undefined;
}

/** Whether the request declared the 2026-07-28 tasks extension. */
export function declaresTasks(server: Server, ctx: ServerContext): boolean {
  const extensions = (clientCapabilities(server, ctx) as { extensions?: Record<string, unknown> })
    ?.extensions;
  return isModern(ctx) && extensions?.[TASKS_EXTENSION] !== undefined;
}

/** Whether a connection negotiated the 2025-11-25 task design (tasks/*, status notifications). */
export function speaksLegacyTasks(server: Server, ctx?: ServerContext): boolean {
  if (ctx && isModern(ctx)) return false;
  return server.getNegotiatedProtocolVersion() === LEGACY_TASKS_VERSION;
}

/**
 * Whether this tool call asks for a task: the request declared the extension (2026-07-28), or
 * augmented the call with `task` (2025-11-25).
 */
export function wantsTask(server: Server, at: { ctx: ServerContext; params: unknown }): boolean {
  if (isModern(at.ctx)) return declaresTasks(server, at.ctx);
  const task = (at.params as { task?: unknown } | undefined)?.task;
  return speaksLegacyTasks(server, at.ctx) && task !== null && typeof task === "object";
}

/** Whether the client can answer a form elicitation. */
export function canElicit(server: Server, ctx: ServerContext): boolean {
  const elicitation = clientCapabilities(server, ctx)?.elicitation as
    | Record<string, unknown>
    | undefined;
  if (!elicitation) return false;
  // `elicitation: {}` means form support (the capability's older spelling).
  return Object.keys(elicitation).length === 0 || elicitation.form !== undefined;
}
