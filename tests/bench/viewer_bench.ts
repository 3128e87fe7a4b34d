/**
 * The viewer benchmark: server time to render a session with 1,000 nodes and 20 forks (target
 * ≤ 100 ms). The session is written through the real use-cases (`openWaymark` start and
 * continue, with notes on every step); the pages are rendered in-process through the Hono app
 * (`app.request`), so the time is the server's alone: queries, layout, Markdown and HTML.
 *
 *   deno run -A tests/bench/viewer_bench.ts [--quick]
 *
 * `tests/bench/mcp_bench.ts` calls {@linkcode viewerBench} at its end and adds the rows to its
 * table and JSON.
 * @module
 */
import { join } from "node:path";
import { openWaymark } from "../../mod.ts";
import { createViewerApp } from "../../web/mod.ts";
import { LONG_ID, longWorkflow, r3, type Stats, stats } from "./common.ts";
import { placeOf } from "../helpers/answers.ts";

/** The target (docs/performance.md): p50 server time to render the session page. */
export const TARGET_VIEWER_MS = 100;

/** Shape of the generated session. */
export const VIEWER_SESSION = { nodes: 1_000, forks: 20, forkLength: 20 } as const;

/** One measured operation. */
export interface ViewerRow {
  /** What was rendered. */
  operation: string;
  /** The path requested. */
  path: string;
  /** Response size in bytes. */
  bytes: number;
  /** Latency statistics (ms). */
  stats: Stats;
  /** Raw samples (ms). */
  samples: number[];
}

/** The benchmark's result. */
export interface ViewerBenchResult {
  /** Nodes, forks and branch tips of the generated run. */
  session: { nodes: number; forks: number; branches: number };
  /** Time to write the session through the use-cases (ms). */
  buildMs: number;
  /** Rows: the session page, a node deep link, the run graph JSON, the Markdown export. */
  rows: ViewerRow[];
  /** Whether the session page met the target at p50. */
  met: boolean;
}

function notes(i: number): string {
  return `### Step ${i}\nChecked **module ${i % 37}**: \`src/mod_${i}.ts\` calls \`helper()\` ` +
    `twice; see [the log](https://example.com/log/${i}).\n\n- finding ${i}a: minor\n- finding ${i}b: nit`;
}

/** Builds the session and times the viewer on it. */
export async function viewerBench(
  options: { samples?: number; warmup?: number; log?: (line: string) => void } = {},
): Promise<ViewerBenchResult> {
  const samples = options.samples ?? 50;
  const warmup = options.warmup ?? 5;
  const log = options.log ?? (() => {});
  const tmp = await Deno.makeTempDir({ prefix: "waymark-viewer-bench-" });
  const { forks, forkLength, nodes: total } = VIEWER_SESSION;
  const mainLength = total - 1 - forks * forkLength;
  const dir = join(tmp, "workflows");
  await Deno.mkdir(dir, { recursive: true });
  await Deno.writeTextFile(join(dir, "bench_long.json"), longWorkflow(mainLength + 50));
  const waymark = await openWaymark({
    home: join(tmp, "home"),
    workspace: tmp,
    extraWorkflowDirs: [dir],
  });
  try {
    type Step = { stateToken: string; ackToken?: string; session: { sessionId: string } };
    const unwrap = (r: { ok: boolean; value?: unknown; error?: { message: string } }): Step => {
      if (!r.ok) throw new Error(`viewer bench: ${r.error?.message}`);
      return r.value as Step;
    };
    const t0 = performance.now();
    let at = unwrap(
      await waymark.start({ workflowId: LONG_ID, goal: "Viewer bench: 1,000 nodes" }),
    );
    const sessionId = at.session.sessionId.replace(/^ses_/, "");
    const main: Step[] = [at];
    for (let i = 1; i <= mainLength; i++) {
      at = unwrap(
        await waymark.continue({
          stateToken: at.stateToken,
          ackToken: at.ackToken,
          output: { notesMarkdown: notes(i) },
        }),
      );
      main.push(at);
    }
    // 20 rewinds: each forks a branch off the main line and walks it forkLength steps
    for (let k = 0; k < forks; k++) {
      const from = main[Math.floor(((k + 1) * mainLength) / (forks + 1))]!;
      let b = unwrap(await waymark.continue({ stateToken: from.stateToken }));
      for (let j = 0; j < forkLength; j++) {
        b = unwrap(
          await waymark.continue({
            stateToken: b.stateToken,
            ackToken: b.ackToken,
            output: { notesMarkdown: `Fork ${k + 1}, step ${j + 1}: ${notes(j)}` },
          }),
        );
      }
    }
    const buildMs = performance.now() - t0;
    const run = await waymark.store.db.selectFrom("runs").select(["run_id", "node_count"])
      .where("session_id", "=", sessionId).executeTakeFirstOrThrow();
    log(`viewer bench: wrote ${run.node_count} nodes in ${(buildMs / 1000).toFixed(1)} s`);

    const host = "127.0.0.1:4321";
    const viewer = createViewerApp({ db: waymark.store.db, allowedHosts: () => [host] });
    const get = async (path: string): Promise<string> => {
      const res = await viewer.app.request(path, { headers: { host } });
      const body = await res.text();
      if (res.status !== 200) throw new Error(`viewer bench: ${path} → ${res.status}`);
      return body;
    };
    const sid = `ses_${sessionId}`;
    const rid = `run_${run.run_id}`;
    const someNode = main[Math.floor(mainLength / 2)]!;
    const nodeId = await waymark.continue({ stateToken: someNode.stateToken });
    const deepNode = nodeId.ok ? placeOf(nodeId.value).nodeId : "";
    const targets = [
      { operation: "viewer session", path: `/sessions/${sid}` },
      { operation: "viewer node", path: `/sessions/${sid}/runs/${rid}/nodes/${deepNode}` },
      { operation: "viewer graph api", path: `/api/sessions/${sid}/runs/${rid}/graph` },
      { operation: "viewer export.md", path: `/sessions/${sid}/export.md` },
    ];
    const page = await get(targets[0]!.path);
    const branches = (page.match(/<li id="n-/g) ?? []).length;
    if (branches !== total) {
      throw new Error(`viewer bench: page drew ${branches} of ${total} nodes`);
    }
    const rows: ViewerRow[] = [];
    for (const target of targets) {
      for (let i = 0; i < warmup; i++) await get(target.path);
      const times: number[] = [];
      let bytes = 0;
      for (let i = 0; i < samples; i++) {
        const t = performance.now();
        const body = await get(target.path);
        times.push(performance.now() - t);
        bytes = new TextEncoder().encode(body).length;
      }
      rows.push({ ...target, bytes, stats: stats(times), samples: times.map(r3) });
    }
    const tips = await waymark.store.db.selectFrom("nodes as n").select((eb) =>
      eb.fn.countAll<number>().as("n")
    ).where((eb) =>
      eb.not(eb.exists(
        eb.selectFrom("nodes as c").select("c.node_id").whereRef("c.parent_id", "=", "n.node_id"),
      ))
    ).executeTakeFirstOrThrow();
    return {
      session: { nodes: Number(run.node_count), forks, branches: Number(tips.n) },
      buildMs,
      rows,
      met: rows[0]!.stats.p50 <= TARGET_VIEWER_MS,
    };
  } finally {
    await waymark.close();
    await Deno.remove(tmp, { recursive: true }).catch(() => {});
  }
}

/** The JSON form mcp_bench.ts writes. */
export function viewerJson(result: ViewerBenchResult): Record<string, unknown> {
  return {
    session: result.session,
    buildMs: r3(result.buildMs),
    targetP50Ms: TARGET_VIEWER_MS,
    met: result.met,
    rows: result.rows.map((r) => ({
      operation: r.operation,
      path: r.path,
      bytes: r.bytes,
      n: r.stats.n,
      p50: r3(r.stats.p50),
      p99: r3(r.stats.p99),
      mean: r3(r.stats.mean),
      min: r3(r.stats.min),
      max: r3(r.stats.max),
      samples: r.samples,
    })),
  };
}

if (import.meta.main) {
  const quick = Deno.args.includes("--quick");
  const result = await viewerBench({
    samples: quick ? 15 : 50,
    warmup: quick ? 2 : 5,
    log: (l) => console.error(`[bench] ${l}`),
  });
  console.log(
    `viewer: ${result.session.nodes} nodes, ${result.session.forks} forks, ${result.session.branches} branch tips`,
  );
  for (const r of result.rows) {
    console.log(
      `${r.operation.padEnd(18)} p50 ${r.stats.p50.toFixed(1).padStart(7)} ms  p99 ${
        r.stats.p99.toFixed(1).padStart(7)
      } ms  ${(r.bytes / 1024).toFixed(0)} KiB`,
    );
  }
  console.log(
    `target: session page p50 ≤ ${TARGET_VIEWER_MS} ms → ${result.met ? "MET" : "NOT MET"}`,
  );
}
