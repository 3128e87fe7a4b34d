/**
 * The HTTP service's authentication (`docs/team_service.md`): the gate in front of the MCP
 * endpoint and the viewer, and what decides whether a listening address needs it.
 * @module
 */
export { type AuthGate, type AuthGateOptions, createAuthGate, requestAuth } from "./gate.ts";

/** Whether `hostname` is a loopback address (127.0.0.0/8, ::1, localhost). */
export function isLoopback(hostname: string): boolean {
  const bare = hostname.replace(/^\[|\]$/g, "").toLowerCase();
  return bare === "localhost" || bare === "::1" || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(bare);
}
