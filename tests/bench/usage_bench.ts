/**
 * What counting a step's tokens costs (issue 36 item 4), in process on a real libSQL file: an
 * advance whose server reads a Claude Code transcript of a long session (20,000 lines before the
 * run, one model call appended per step, as the host writes it) beside the same advance with no
 * transcript to read, taken in turns so the ratio is of one machine state.
 *
 *   deno run -A tests/bench/usage_bench.ts [--lines 20000] [--samples 40]
 * @module
 */
import { appendFile, mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { openWaymark } from "../../mod.ts";
import { continueWorkflow } from "../../engine/use_cases/continue_workflow.ts";
import { startWorkflow } from "../../engine/use_cases/start_workflow.ts";
import type { StepResponse } from "../../engine/answers/responses.ts";
import type { EngineDeps } from "../../engine/model/ports.ts";
import { claudeCodeMeter } from "../../store/transcripts/claude_code.ts";
import { LONG_ID, longWorkflow, r3, stats } from "./common.ts";

const SESSION = "0b7c1a52-1f7e-4c55-9d0b-3a5c4c1e2f10";

function line(i: number): string {
  return JSON.stringify({
    type: "assistant",
    timestamp: new Date().toISOString(),
    sessionId: SESSION,
    message: {
      id: `msg_${i}`,
      content: [{ type: "text", text: "x".repeat(400) }],
      usage: { input_tokens: 1000 + i, output_tokens: 20, cache_read_input_tokens: 5000 },
    },
  });
}

type Walk = { deps: EngineDeps; at: StepResponse };

async function start(deps: EngineDeps): Promise<Walk> {
  const started = await startWorkflow(deps, { workflowId: LONG_ID });
  if (!started.ok) throw new Error(started.error.message);
  return { deps, at: started.value };
}

async function advance(w: Walk): Promise<number> {
  const t0 = performance.now();
  const next = await continueWorkflow(w.deps, {
    stateToken: w.at.stateToken,
    ackToken: w.at.ackToken!,
    output: { notesMarkdown: "done" },
  });
  const ms = performance.now() - t0;
  if (!next.ok) throw new Error(next.error.message);
  w.at = next.value;
  return ms;
}

if (import.meta.main) {
  const { values } = parseArgs({
    args: Deno.args,
    options: {
      lines: { type: "string", default: "20000" },
      samples: { type: "string", default: "40" },
    },
  });
  const lines = Number(values.lines);
  const samples = Number(values.samples);
  const tmp = await Deno.makeTempDir({ prefix: "waymark-usage-bench-" });
  try {
    const workspace = join(tmp, "work");
    await mkdir(join(workspace, ".waymark", "workflows"), { recursive: true });
    await writeFile(
      join(workspace, ".waymark", "workflows", "long.json"),
      longWorkflow(samples + 20),
    );
    const config = join(tmp, "claude");
    const transcript = join(config, "projects", "-work", `${SESSION}.jsonl`);
    await mkdir(join(config, "projects", "-work"), { recursive: true });
    await writeFile(transcript, Array.from({ length: lines }, (_, i) => `${line(i)}\n`).join(""));
    const waymark = await openWaymark({ home: join(tmp, "home"), workspace });
    try {
      const meter = claudeCodeMeter({
        env: { CLAUDE_CODE_SESSION_ID: SESSION, CLAUDE_CONFIG_DIR: config },
        cwd: workspace,
      })!;
      const counted = await start({ ...waymark.deps, usage: meter });
      const plain = await start({ ...waymark.deps, usage: undefined });
      const withMeter: number[] = [];
      const without: number[] = [];
      for (let i = 0; i < samples + 3; i++) {
        await appendFile(transcript, `${line(lines + i)}\n`);
        const m = await advance(counted);
        const p = await advance(plain);
        if (i < 3) continue; // warm-up (the first reading reads the whole backlog)
        withMeter.push(m);
        without.push(p);
      }
      const a = stats(withMeter);
      const b = stats(without);
      console.log(JSON.stringify(
        {
          lines,
          samples,
          advanceCountingTokensMs: { p50: r3(a.p50), p99: r3(a.p99) },
          advanceWithoutMs: { p50: r3(b.p50), p99: r3(b.p99) },
          ratioP50: r3(a.p50 / b.p50),
        },
        null,
        2,
      ));
    } finally {
      await waymark.close();
    }
  } finally {
    await Deno.remove(tmp, { recursive: true });
  }
}
