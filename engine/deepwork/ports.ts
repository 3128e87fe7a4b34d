/**
 * What the DeepWork use-cases need from the outside world besides the store: jobs, the files
 * agents name as outputs, and the quality gate's reviewer. Adapters implement these; the engine
 * only calls them.
 * @module
 */
import type { EngineDeps } from "../model/ports.ts";
import type { JobSource } from "./job_catalog.ts";

/** Facts about a file an agent submitted, recorded so a replay never reads it again. */
export interface FileFacts {
  /** The path as submitted (relative to the workspace root, or absolute inside it). */
  path: string;
  /** Size in bytes. */
  size: number;
  /** SHA-256 of the content, lower-case hex; `null` when the file was past the hashing budget. */
  sha256: string | null;
  /** Last modification (ISO-8601), recorded instead of the hash past the budget; else absent. */
  modified?: string;
}

/** Why a submitted path was refused. */
export type FileRefusal = "missing" | "outside" | "not_a_file" | "empty" | "unreadable";

/** Files inside a workspace root. */
export interface WorkspaceFiles {
  /**
   * Facts about `path` resolved against `root`, or why it cannot be used; its content is hashed
   * (read as a stream, in bounded memory) only when its size is at most `hashUpTo` bytes, else
   * its size and modification time stand for it. Never throws.
   */
  describe(
    root: string,
    path: string,
    options: { hashUpTo: number },
  ): Promise<{ ok: true; facts: FileFacts } | { ok: false; reason: FileRefusal }>;
  /** The text of a file inside `root` (at most `maxBytes`, cut), or `null` when unreadable. */
  readText(root: string, path: string, maxBytes: number): Promise<string | null>;
  /**
   * Writes a text file inside `root`, creating folders; returns its absolute path, or `null`
   * when it could not be written there (a folder or link on the way leaves `root`, no access).
   */
  writeText(root: string, path: string, text: string): Promise<string | null>;
}

/** How an external review command ended. */
export type ReviewRun =
  | { kind: "exited"; code: number; stdout: string; stderr: string }
  | { kind: "timeout"; afterMs: number }
  | { kind: "failed_to_start"; message: string };

/** Runs the external review command once, with a prompt on its stdin. */
export interface ReviewRunner {
  /** What the command is, for messages. */
  readonly command: string;
  /** Runs it; never throws. */
  run(prompt: string, options: { timeoutMs: number }): Promise<ReviewRun>;
}

/** The quality gate's settings; absent when the gate is off. */
export interface QualityGate {
  /** How many external reviews a step gets before `finished_step` fails with the feedback. */
  maxAttempts: number;
  /** How long one review may take. */
  timeoutMs: number;
  /** The external reviewer, or `null` for self-review (instructions written to a file). */
  runner: ReviewRunner | null;
}

/**
 * Who is calling, and which stack holders are still there. Each connection (a stdio server
 * process, an MCP session over HTTP) has its own key; a stack is held by the key that started
 * or took it over. A holder counts as live unless the adapter knows it is gone.
 */
export interface AgentPresence {
  /** This connection's key. */
  readonly self: string;
  /** Whether the connection holding a stack may still be there (unknown: yes; `""`: no). */
  isLive(owner: string): boolean;
}

/** Everything the DeepWork use-cases use besides the engine's own dependencies. */
export interface JobPorts {
  /** Where jobs come from. */
  jobs: JobSource;
  /** Output files. */
  files: WorkspaceFiles;
  /** The quality gate, or `null` when it is off. */
  gate: QualityGate | null;
  /** The caller's connection, and which others are live. */
  presence: AgentPresence;
}

/** The engine's dependencies with the DeepWork ports: what the DeepWork use-cases take. */
export type JobDeps = EngineDeps & JobPorts;
