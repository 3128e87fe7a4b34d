/**
 * The first tool call of a session, with the bundled workflows plus a generated 100-file user
 * library in `$WAYMARK_HOME/workflows`: each sample is a fresh `waymark serve` process
 * (handshake, `tools/list`, and the `resources/list` clients make at start-up, untimed: it is
 * answered once start-up is over, and reads no workflow), then one timed call. Three first calls, in turn: starting a bundled
 * workflow, starting a library workflow, and listing everything; and a fourth that starts a
 * bundled workflow right after `tools/list`, which also waits for the rest of start-up (serve
 * answers the handshake and `tools/list` before loading the engine and the store).
 * @module
 */
import { join } from "node:path";
import { parseArgs } from "node:util";
import { parse } from "npm:jsonc-parser@3.3.1";
import { BUNDLED_WORKFLOWS } from "../../workflows/mod.ts";
import { type Stats, stats } from "./common.ts";
import {
  BenchFailure,
  callTool,
  handshake,
  spawnSubject,
  step,
  timed,
  withStderr,
} from "./session.ts";

/** Files in the generated library. */
export const LIBRARY_FILES = 100;
/** The library workflow the second scenario starts. */
export const LIBRARY_ID = "user.lib_050";

/**
 * Writes the library: 96 copies of the bundled workflows under `user.lib_NNN` ids, a routine
 * and three workflows that call it, as plain JSON files last modified an hour ago.
 */
export async function writeLibrary(dir: string): Promise<void> {
  await Deno.mkdir(dir, { recursive: true });
  const bases = BUNDLED_WORKFLOWS.map((f) => parse(f.text) as Record<string, unknown>);
  // a library that exists, not one written a moment ago: a file modified in the last few
  // seconds is read again by every new session (README, "Performance")
  const past = new Date(Date.now() - 3_600_000);
  const write = async (name: string, data: unknown) => {
    const file = join(dir, `${name}.json`);
    await Deno.writeTextFile(file, JSON.stringify(data, null, 2));
    await Deno.utime(file, past, past);
  };
  const count = LIBRARY_FILES - 4;
  for (let i = 0; i < count; i++) {
    const id = `user.lib_${String(i).padStart(3, "0")}`;
    const base = bases[i % bases.length]!;
    await write(id.slice(5), { ...base, id, name: `${base.name} (${id})` });
  }
  const steps = [{ id: "check", title: "Check", prompt: "Check {{what}} twice." }];
  await write("routine_double_check", {
    id: "user.routine-double_check",
    name: "Double check",
    description: "Checks a thing twice.",
    version: "1.0.0",
    steps,
  });
  for (let i = 0; i < 3; i++) {
    await write(`caller_${i}`, {
      id: `user.caller_${i}`,
      name: `Caller ${i}`,
      description: "Calls the double-check routine.",
      version: "1.0.0",
      steps: [
        { id: "work", title: "Work", prompt: "Do the work." },
        {
          id: "verify",
          title: "Verify",
          templateCall: { templateId: "user.templates.routine.double_check", args: { what: "it" } },
        },
      ],
    });
  }
}

/** One first call: the tool, its arguments, and whether the client listed resources first. */
interface FirstCall {
  tool: string;
  args: Record<string, unknown>;
  /**
   * `false`: the call follows `tools/list` at once, so it also waits for what the server loads
   * after answering the handshake (a scripted client; an agent's model thinks first).
   */
  settled: boolean;
}

/** The first calls measured, by name. */
const FIRST_CALLS: Record<string, FirstCall> = {
  "start_workflow (bundled)": {
    tool: "start_workflow",
    args: { workflowId: "waymark.code_review" },
    settled: true,
  },
  "start_workflow (library)": {
    tool: "start_workflow",
    args: { workflowId: LIBRARY_ID },
    settled: true,
  },
  "list_workflows": { tool: "list_workflows", args: {}, settled: true },
  "start_workflow (bundled), at once": {
    tool: "start_workflow",
    args: { workflowId: "waymark.code_review" },
    settled: false,
  },
};

async function firstCall(
  home: string,
  cwd: string,
  call: FirstCall,
  denoFlags?: string[],
): Promise<number> {
  const rpc = spawnSubject({ subject: "main_ts", home, cwd, roots: true, denoFlags });
  try {
    await handshake(rpc, true);
    await rpc.request("tools/list", {});
    // Clients list resources at start-up too (prompts as well, which would load every workflow
    // and flatter the call); it is answered once the server is composed.
    if (call.settled) {
      await rpc.request("resources/list", {});
    }
    const [ms, result] = await timed(() => callTool(rpc, call.tool, call.args));
    if (call.tool === "start_workflow") step(result, call.tool);
    else {
      const listed = (result.structuredContent as { workflows: unknown[] }).workflows.length;
      if (listed !== LIBRARY_FILES + BUNDLED_WORKFLOWS.length) {
        throw new BenchFailure(`list_workflows listed ${listed} workflows`);
      }
    }
    return ms;
  } catch (error) {
    throw withStderr(error, rpc);
  } finally {
    await rpc.close();
  }
}

/** First-call latency by scenario, over `rounds` fresh processes each. */
export async function firstCalls(
  options: {
    home: string;
    cwd: string;
    rounds: number;
    log: (line: string) => void;
    /** Where each measured server writes a V8 CPU profile, if anywhere. */
    cpuProf?: string;
  },
): Promise<Record<string, Stats & { samples: number[] }>> {
  await writeLibrary(join(options.home, "workflows"));
  for (const call of Object.values(FIRST_CALLS)) await firstCall(options.home, options.cwd, call);
  const samples: Record<string, number[]> = {};
  const flags = options.cpuProf ? [`--cpu-prof`, `--cpu-prof-dir=${options.cpuProf}`] : undefined;
  for (let round = 0; round < options.rounds; round++) {
    for (const [name, call] of Object.entries(FIRST_CALLS)) {
      (samples[name] ??= []).push(await firstCall(options.home, options.cwd, call, flags));
    }
  }
  options.log(`first calls: ${options.rounds} fresh sessions per scenario, 100-file library`);
  return Object.fromEntries(
    Object.entries(samples).map(([name, s]) => [name, { ...stats(s), samples: s }]),
  );
}

if (import.meta.main) {
  // only the first calls: deno run -A tests/bench/first_call.ts [--rounds N] [--cpu-prof DIR]
  const { values } = parseArgs({
    args: Deno.args,
    options: { rounds: { type: "string", default: "9" }, "cpu-prof": { type: "string" } },
  });
  const tmp = await Deno.makeTempDir({ prefix: "waymark-first-call-" });
  try {
    const cwd = join(tmp, "workspace");
    await Deno.mkdir(cwd);
    const log = (line: string) => console.error(`[first call] ${line}`);
    const result = await firstCalls({
      home: join(tmp, "home"),
      cwd,
      rounds: Number(values.rounds),
      log,
      cpuProf: values["cpu-prof"],
    });
    for (const [name, s] of Object.entries(result)) {
      console.log(`${name.padEnd(28)} p50 ${s.p50.toFixed(1)} ms  min ${s.min.toFixed(1)} ms`);
    }
  } finally {
    await Deno.remove(tmp, { recursive: true });
  }
}
