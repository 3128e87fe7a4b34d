/**
 * Who a DeepWork caller is, and whether the holder of a stack is still there. Each connection
 * (a stdio server process, an MCP session over HTTP) gets a key `PID@HOST#NONCE`. A holder on
 * this host whose process has exited is gone, as is a holder recorded before stacks had
 * holders (`""`); one on another host, or another connection of this process, counts as live,
 * since nothing here can tell it is not (its stacks stay reachable by `session_id`).
 * @module
 */
import { hostname } from "node:os";
import process from "node:process";
import type { AgentPresence } from "../../../engine/deepwork/ports.ts";

const KEY = /^(\d+)@(.*)#([0-9a-f]+)$/;

/** Whether process `pid` of this host exists (a process we may not signal exists too). */
function processExists(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as { code?: string }).code === "EPERM";
  }
}

/** A new connection's presence: its own key, and the liveness of other keys. */
export function connectionPresence(): AgentPresence {
  const host = hostname();
  const nonce = crypto.getRandomValues(new Uint8Array(6));
  const self = `${process.pid}@${host}#${
    [...nonce].map((b) => b.toString(16).padStart(2, "0")).join("")
  }`;
  return {
    self,
    isLive(owner) {
      if (owner === self) return true;
      if (owner === "") return false;
      const parsed = KEY.exec(owner);
      if (!parsed || parsed[2] !== host) return true;
      const pid = Number(parsed[1]);
      return pid === process.pid || processExists(pid);
    },
  };
}
