/**
 * The stores the contract suite runs against, and what its cases share: engine deps with a
 * real keyring, clock and randomness over a given store, compiled test workflows, and call
 * helpers that fail the test on an error result.
 * @module
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { createClient } from "@libsql/client";
import type { EngineDeps, Store } from "../../engine/model/ports.ts";
import type { StepResponse } from "../../engine/answers/responses.ts";
import type { Result } from "../../engine/model/result.ts";
import { checkpointWorkflow } from "../../engine/use_cases/checkpoint_workflow.ts";
import { continueWorkflow } from "../../engine/use_cases/continue_workflow.ts";
import { startWorkflow } from "../../engine/use_cases/start_workflow.ts";
import { keepSession } from "../helpers/answers.ts";
import {
  type LoadedSet,
  loadWorkflowFiles,
  resolveCatalog,
} from "../../engine/workflow/catalog.ts";
import { cryptoRandom, openStore, systemClock } from "../../store/mod.ts";
import { testKeyring } from "../helpers/memory.ts";
import { freshPostgresUrl, postgresBin } from "../helpers/postgres.ts";

/** A store under test with what the cases need besides the port. */
export interface Subject {
  /** The store. */
  store: Store & { counts(): Promise<Record<string, number>> };
  /** Marks a session corrupt the way the store itself would on a failed check. */
  corrupt(sessionId: string): Promise<void>;
  /** Closes the store and removes its files. */
  cleanup(): Promise<void>;
}

/** A clock that moves one second per reading, so orderings by time never tie. */
function tickingClock(): () => string {
  let at = Date.parse("2030-01-01T00:00:00.000Z");
  return () => new Date(at += 1000).toISOString();
}

/** A fresh database on this process's throwaway PostgreSQL server (`tests/helpers/postgres.ts`). */
async function postgresSubject(): Promise<Subject> {
  const store = await openStore(await freshPostgresUrl(), { now: tickingClock() });
  return {
    store,
    async corrupt(sessionId) {
      await store.db.updateTable("sessions").set({ health: "corrupt" })
        .where("session_id", "=", sessionId).execute();
    },
    cleanup: () => store.close(),
  };
}

/**
 * The stores, by name: each opens empty and time-stamps events with a ticking clock. PostgreSQL
 * is left out only where no server is installed (never on CI, which installs it).
 */
export const SUBJECTS: Record<string, () => Promise<Subject>> = {
  async libsql() {
    const dir = await Deno.makeTempDir({ prefix: "waymark-contract-" });
    const url = `file:${join(dir, "waymark.db")}`;
    const store = await openStore(url, { now: tickingClock() });
    return {
      store,
      async corrupt(sessionId) {
        const client = createClient({ url });
        await client.execute({
          sql: "UPDATE sessions SET health = 'corrupt' WHERE session_id = ?",
          args: [sessionId],
        });
        client.close();
      },
      async cleanup() {
        await store.close();
        await Deno.remove(dir, { recursive: true }).catch(() => {});
      },
    };
  },
  ...(postgresBin() || Deno.env.get("CI") ? { postgres: postgresSubject } : {}),
};

function plain(id: string, steps: number): unknown {
  return {
    id,
    name: `Contract ${id}`,
    description: `A ${steps}-step test workflow.`,
    version: "1.0.0",
    steps: Array.from({ length: steps }, (_, i) => ({
      id: `s${i + 1}`,
      title: `Step ${i + 1}`,
      prompt: `Do step ${i + 1}.`,
    })),
  };
}

const GATE = {
  id: "project.gate",
  name: "Gate",
  description: "The first step blocks until its notes say DONE.",
  version: "1.0.0",
  steps: [
    {
      id: "write",
      title: "Write",
      prompt: "Write it up.",
      validationCriteria: [{ type: "contains", value: "DONE", message: "Say DONE" }],
    },
    { id: "end", title: "End", prompt: "Finish." },
  ],
};

let compiled: Promise<LoadedSet> | undefined;

/** The test workflows: `project.plain` (3 steps), `project.long` (70 steps), `project.gate`. */
export function testWorkflows(): Promise<LoadedSet> {
  compiled ??= (async () => {
    const texts = [plain("project.plain", 3), plain("project.long", 70), GATE];
    const results = await loadWorkflowFiles(
      texts.map((w, i) => ({
        source: "project",
        file: `contract_${i}.json`,
        text: JSON.stringify(w),
      })),
    );
    const workflows = results.flatMap((r) => r.ok ? [r.workflow] : []);
    assert.equal(workflows.length, texts.length, JSON.stringify(results));
    return resolveCatalog(workflows, []);
  })();
  return compiled;
}

/** Engine deps over `store`: real keyring, clock and randomness, the test workflows. */
export async function engineDeps(store: Store): Promise<EngineDeps> {
  const set = await testWorkflows();
  return {
    store,
    workflows: { load: () => Promise.resolve(set) },
    keyring: testKeyring(),
    clock: systemClock,
    random: cryptoRandom,
  };
}

/** The value of a result, failing the test on an error. */
export function value<T>(result: Result<T>, what = "call"): T {
  if (!result.ok) assert.fail(`${what} failed: ${JSON.stringify(result.error)}`);
  return result.value;
}

/** Starts a run. */
export async function start(
  deps: EngineDeps,
  workflowId: string,
  options: { goal?: string; workspace?: string } = {},
): Promise<StepResponse> {
  const workspace = options.workspace === undefined
    ? undefined
    : { workspace: options.workspace, gitBranch: null, gitHeadSha: null };
  return value(await startWorkflow(deps, { workflowId, goal: options.goal }, { workspace }));
}

/** Acknowledges the pending step of `from` with `notes`. */
export async function ack(
  deps: EngineDeps,
  from: StepResponse,
  notes?: string,
): Promise<StepResponse> {
  const next = value(
    await continueWorkflow(deps, {
      stateToken: from.stateToken,
      ackToken: from.ackToken!,
      ...(notes === undefined ? {} : { output: { notesMarkdown: notes } }),
    }),
    "ack",
  );
  return keepSession(next, from); // the cases follow runs by the session their start named
}

/** Rehydrates `from`'s node (fresh tokens, writes nothing). */
export async function rehydrate(deps: EngineDeps, from: StepResponse): Promise<StepResponse> {
  return value(await continueWorkflow(deps, { stateToken: from.stateToken }), "rehydrate");
}

/** Checkpoints at `from`'s node with `notes`. */
export async function checkpoint(
  deps: EngineDeps,
  from: StepResponse,
  notes: string,
): Promise<StepResponse> {
  return value(
    await checkpointWorkflow(deps, {
      stateToken: from.stateToken,
      checkpointToken: from.checkpointToken,
      output: { notesMarkdown: notes },
    }),
    "checkpoint",
  );
}

/** Walks `steps` acks from `from`, with notes `<prefix> <n>`; every response, in order. */
export async function walk(
  deps: EngineDeps,
  from: StepResponse,
  options: { steps: number; prefix: string },
): Promise<StepResponse[]> {
  const out: StepResponse[] = [];
  let at = from;
  for (let i = 1; i <= options.steps; i++) {
    at = await ack(deps, at, `${options.prefix} ${i}`);
    out.push(at);
  }
  return out;
}
