/**
 * The MCP latency benchmark. waymark is spawned as an MCP client would spawn it (a child process
 * over stdio) and spoken to in newline-delimited JSON-RPC directly, so no client SDK sits on the
 * timed path. In the same run it measures the floor, an MCP SDK server whose one tool echoes
 * (`echo_server.ts`), and prints every row in ms and as a multiple of that floor, so runs on
 * busy and quiet machines compare.
 *
 * Measured: cold start to `tools/list` of the floor, of `deno task start`, of
 * `deno run main.ts serve` (existing and fresh home) and of the single-file build
 * (`cold_start.ts`); the floor's call; `start_workflow`; in ONE run of a generated ~10,600-step
 * project workflow, advance / replay / rehydrate at 10, 1,000 and 10,000 prior advances, with the
 * server's RSS after 100 advances and after the last level; the first tool call of a session
 * with a 100-file user library (`first_call.ts`); `list_workflows` with the bundled library, warm
 * and as a session's first call (`list_bench.ts`); the viewer (`viewer_bench.ts`) and
 * `resume_session` over 10,000 sessions (`resume_bench.ts`); what a client pays
 * (`client_bench.ts`): the v1 SDK client's cold start, advance, replay and rehydrate over its own
 * floor, and the bytes of `tools/list` and of each answer; what a host's model reads
 * (`model_bench.ts`): tool definitions and each answer of a walk of the bundled library, as
 * Claude Code and Gemini CLI pass them on. Medians are what targets use.
 *
 *   deno task bench            full run (several minutes on 2 cores)
 *   deno task bench --quick    smoke run (1,000 prior advances at most, fewer samples)
 *   deno task bench --only client,cold   only those scenarios (cold, long, first, list,
 *                              client, viewer, resume, snapshots, deepwork, model, hosts); the floor's call is always
 *                              measured. `hosts` (`host_bytes.ts`): what the model reads through
 *                              real Claude Code and Gemini CLI with the scripted model; `model`
 *                              (`model_bench.ts`): the same bytes in process, every bundled walk
 *
 * Other flags: `--no-roots`, `--keep` (keep the temp dirs), `--samples N`, `--out FILE`,
 * `--cpu-prof DIR` (the long session's server and the http replica write V8 CPU profiles
 * there; summarise them with `cpu_profile.ts`), `--db postgres` (everything on a throwaway local PostgreSQL server,
 * `postgres_db.ts`).
 * `in_process.ts` runs the same calls without a transport and times every SQL statement.
 * Targets are reported, never enforced: the exit code is non-zero only when something fails.
 * @module
 */
import { dirname, join, relative } from "node:path";
import { RpcError, type StdioRpc } from "./stdio_rpc.ts";
import { LONG_ID, longWorkflow, r3, type Stats, stats } from "./common.ts";
import { viewerBench, viewerJson } from "./viewer_bench.ts";
import { resumeBench, resumeJson, resumeReport } from "./resume_bench.ts";
import { snapshotBench, snapshotJson, snapshotReport } from "./snapshot_bench.ts";
import { deepworkBench, deepworkJson, deepworkReport } from "./deepwork_bench.ts";
import { hostBytesBench, hostBytesJson, hostBytesReport, hostTargets } from "./host_bytes.ts";
import { hasHost } from "../helpers/hosts.ts";
import { buildBundle, type ColdSample, coldStart, coldStarts, floorCalls } from "./cold_start.ts";
import { firstCalls } from "./first_call.ts";
import { listBench } from "./list_bench.ts";
import { bytesTable, type Floor, type Row, rowJson, table, targetLines } from "./report.ts";
import { clientBench, type ClientResult, clientStats, DEPTH } from "./client_bench.ts";
import { benchTargets, machine } from "./targets.ts";
import { type LevelResult, longSession } from "./long_run.ts";
import { BenchFailure, ROOT, type SpawnSpec } from "./session.ts";
import { type Config, config, type Scenario } from "./config.ts";
import { benchDatabase } from "./postgres_db.ts";
import { modelBytes, modelReport } from "./model_bench.ts";
import { httpBench, httpReport } from "./http_bench.ts";

function log(line: string): void {
  console.error(`[bench] ${line}`);
}

/** Where a run keeps its files. */
interface Dirs {
  tmp: string;
  workspace: string;
  homes: string;
  bundle: string;
}

async function prepare(cfg: Config): Promise<Dirs> {
  const tmp = await Deno.makeTempDir({ prefix: "waymark-bench-" });
  const dirs = {
    tmp,
    workspace: join(tmp, "workspace"),
    homes: join(tmp, "homes"),
    bundle: join(tmp, "bundle"),
  };
  await Deno.mkdir(join(dirs.workspace, ".waymark", "workflows"), { recursive: true });
  await Deno.mkdir(dirs.homes, { recursive: true });
  await Deno.mkdir(dirs.bundle, { recursive: true });
  const file = join(dirs.workspace, ".waymark", "workflows", "bench_long.json");
  await Deno.writeTextFile(file, longWorkflow(cfg.longSteps));
  // An agent's workspace is a git checkout: every call reads its branch and HEAD commit.
  await Deno.mkdir(join(dirs.workspace, ".git", "refs", "heads"), { recursive: true });
  await Deno.writeTextFile(join(dirs.workspace, ".git", "HEAD"), "ref: refs/heads/main\n");
  await Deno.writeTextFile(
    join(dirs.workspace, ".git", "refs", "heads", "main"),
    `${"5".repeat(40)}\n`,
  );
  log(`mode ${cfg.mode}; ${cfg.longSteps} generated steps; workspace ${dirs.workspace}`);
  return dirs;
}

function levelRows(levels: LevelResult[], control: LevelResult): Row[] {
  const rows: Row[] = [];
  for (const op of ["advance", "replay", "rehydrate"] as const) {
    for (const level of levels) {
      rows.push({ operation: op, prior: level.prior, stats: stats(level[op]), floor: "call" });
    }
    rows.push({
      operation: `${op} (ctl)`,
      prior: control.prior,
      stats: stats(control[op]),
      floor: "call",
    });
  }
  return rows;
}

function levelJson(l: LevelResult): Record<string, unknown> {
  const one = (s: number[]) => ({ p50: r3(stats(s).p50), n: s.length, samples: s.map(r3) });
  return {
    prior: l.prior,
    advance: one(l.advance),
    replay: one(l.replay),
    rehydrate: one(l.rehydrate),
    replayMismatches: l.replayMismatches,
  };
}

async function gitHead(): Promise<{ commit: string | null; dirty: boolean | null }> {
  const run = async (args: string[]) => {
    const out = await new Deno.Command("git", { args, cwd: ROOT, stdout: "piped", stderr: "null" })
      .output().catch(() => null);
    return out?.success ? new TextDecoder().decode(out.stdout).trim() : null;
  };
  const commit = await run(["rev-parse", "HEAD"]);
  const status = await run(["status", "--porcelain", "--untracked-files=no"]);
  return { commit, dirty: status === null ? null : status.length > 0 };
}

/** The cold starts (interleaved, then fresh homes; only with `cold`) and the floor's call. */
async function startUp(cfg: Config, dirs: Dirs) {
  const spec = (subject: SpawnSpec["subject"], bundleFile?: string): SpawnSpec => ({
    subject,
    home: join(dirs.homes, `cold-${subject}`),
    cwd: dirs.workspace,
    roots: cfg.roots,
    bundleFile,
  });
  const row = (operation: string, s: Stats, kind: Row["floor"]): Row => ({
    operation,
    prior: null,
    stats: s,
    floor: kind,
  });
  const floorCall = await floorCalls(dirs.workspace, { warmup: cfg.warmup, samples: cfg.samples });
  const floor: Floor = { cold: NaN, call: floorCall.p50, v1Cold: NaN, v1Call: NaN };
  const rows: Row[] = [row("floor: echo call", floorCall, "call")];
  if (!cfg.only.has("cold")) {
    return { floor, rows, cold: new Map<SpawnSpec["subject"], ColdSample[]>() };
  }
  const bundleFile = await buildBundle(dirs.bundle);
  log(`bundled ${bundleFile}`);
  const subjects = ["echo", "task_start", "main_ts", "bundle"] as const;
  const cold = await coldStarts(subjects.map((s) => spec(s, bundleFile)), cfg.coldStarts, log);
  const fresh = []; // each on a new home: creates and migrates the database
  for (let i = 0; i < Math.min(cfg.coldStarts, 5); i++) {
    fresh.push(await coldStart({ ...spec("main_ts"), home: join(dirs.homes, `fresh-${i}`) }));
  }
  const coldStats = (s: SpawnSpec["subject"]) => stats(cold.get(s)!.map((c) => c.toolsListMs));
  floor.cold = coldStats("echo").p50;
  log(`floor: cold start ${floor.cold.toFixed(1)} ms, echo call ${floor.call.toFixed(3)} ms`);
  rows.unshift(row("floor: cold start (SDK echo)", coldStats("echo"), "cold"));
  rows.push(
    row("cold start: deno task start", coldStats("task_start"), "cold"),
    row("cold start: main.ts serve", coldStats("main_ts"), "cold"),
    row("cold start: fresh home", stats(fresh.map((c) => c.toolsListMs)), "cold"),
    row("cold start: bundle", coldStats("bundle"), "cold"),
  );
  return { floor, rows, cold };
}

/** The client scenario's rows (over the v1 floor), and the v1 floor itself. */
function clientRows(client: ClientResult, floor: Floor): Row[] {
  const all = clientStats(client);
  floor.v1Cold = all["v1: floor: cold start (SDK echo)"]!.p50;
  floor.v1Call = all["v1: floor: echo call"]!.p50;
  return Object.entries(all).map(([operation, s]): Row => ({
    operation,
    prior: null,
    stats: s,
    floor: operation.includes("cold start") ? "v1Cold" : "v1Call",
  }));
}

async function measure(
  cfg: Config,
  dirs: Dirs,
  database: { label: string; pgDir?: string },
): Promise<Record<string, unknown>> {
  const loadavgAtStart = Deno.loadavg();
  const on = (s: Scenario) => cfg.only.has(s);
  const { floor, rows: coldRows, cold } = await startUp(cfg, dirs);
  const session = on("long")
    ? await longSession(cfg, { home: join(dirs.homes, "main"), ...dirs, log })
    : undefined;
  const first = on("first")
    ? await firstCalls({
      home: join(dirs.homes, "library"),
      cwd: dirs.bundle, // no project workflows: bundled and the user library only
      rounds: cfg.firstCalls,
      log,
    })
    : undefined;
  const list = on("list")
    ? await listBench({
      home: join(dirs.homes, "list"),
      cwd: dirs.bundle, // no project workflows: the bundled library alone
      samples: cfg.samples,
      rounds: cfg.firstCalls,
      log,
    })
    : undefined;
  const client = on("client")
    ? await clientBench({
      home: join(dirs.homes, "client"),
      workspace: dirs.workspace,
      rounds: cfg.coldStarts,
      samples: cfg.mode === "quick" ? 50 : 100,
    }, log)
    : undefined;
  const quick = cfg.mode === "quick";
  if (on("viewer")) log("viewer: building a 1,000-node session with 20 forks and rendering it");
  const viewer = on("viewer")
    ? await viewerBench({ samples: quick ? 15 : 50, warmup: quick ? 2 : 5, log })
    : undefined;
  const resume = on("resume")
    ? await resumeBench({ sessions: quick ? 1_000 : 10_000, samples: quick ? 25 : 100, log })
    : undefined;
  if (on("snapshots")) log("snapshots: a 10,000-file git repository, advances and restores");
  const snapshots = on("snapshots")
    ? await snapshotBench({ files: quick ? 2_000 : 10_000, samples: quick ? 8 : 20 })
    : undefined;
  const deepwork = on("deepwork") ? await deepworkBench({ quick, log }) : undefined;
  const hostsThere = hasHost("claude") && hasHost("gemini");
  if (on("hosts") && !hostsThere) {
    log("hosts: skipped (install them with `deno run -A tests/helpers/hosts.ts install`)");
  }
  const hosts = on("hosts") && hostsThere
    ? await hostBytesBench({ log, workrail: Deno.env.get("WAYMARK_BENCH_WORKRAIL") })
    : undefined;
  if (on("model")) log("model: walking every bundled workflow for what a host's model reads");
  const model = on("model") ? await modelBytes() : undefined;
  const http = on("http")
    ? await httpBench(dirs, {
      samples: cfg.samples,
      warmup: cfg.longWarmup,
      agents: 8,
      seconds: quick ? 5 : 15,
      pgDir: database.pgDir,
      cpuProf: cfg.cpuProf,
      log,
    })
    : undefined;
  const rows: Row[] = [
    ...coldRows,
    ...(session
      ? [
        { operation: "start_workflow", prior: null, stats: stats(session.start), floor: "call" },
        ...levelRows(session.levels, session.control),
      ] as Row[]
      : []),
    ...Object.entries(first ?? {}).map(([name, s]): Row => ({
      operation: `first call: ${name}`,
      prior: null,
      stats: s,
      floor: "call",
    })),
    ...(list
      ? [
        { operation: "list_workflows (bundled library)", prior: null, stats: list.warm },
        {
          operation: "first call: list_workflows (bundled library)",
          prior: null,
          stats: list.first,
        },
      ].map((row): Row => ({ ...row, floor: "call" }))
      : []),
    ...(client ? clientRows(client, floor) : []),
    ...(viewer?.rows ?? []).map((v): Row => ({
      operation: v.operation,
      prior: null,
      stats: v.stats,
      floor: null,
    })),
  ];
  const targets = [
    ...benchTargets({ floor, rows, session, first, bytes: client?.bytes, model, http }),
    ...(hosts ? hostTargets(hosts) : []),
  ];
  printReport({ cfg, rows, floor, targets, session, bytes: client?.bytes });
  if (resume) console.log(`\n${resumeReport(resume)}`);
  if (snapshots) console.log(`\n${snapshotReport(snapshots)}`);
  if (deepwork) console.log(`\n${deepworkReport(deepwork)}`);
  if (model) console.log(`\n${modelReport(model)}`);
  if (hosts) console.log(`\n${hostBytesReport(hosts)}`);
  if (http) console.log(`\n${httpReport(http, Deno.loadavg())}`);
  return {
    benchmark: "waymark-mcp-stdio",
    timestamp: new Date().toISOString(),
    mode: cfg.mode,
    scenarios: [...cfg.only],
    database: database.label,
    config: { ...cfg, only: [...cfg.only] },
    machine: { ...machine(), loadavgAtStart, loadavgAtEnd: Deno.loadavg() },
    git: await gitHead(),
    units: "ms",
    floor: Object.fromEntries(Object.entries(floor).map(([k, v]) => [`${k}Ms`, r3(v)])),
    table: rows.map((r) => rowJson(r, floor)),
    targets,
    ...(client ? { bytes: client.bytes } : {}),
    ...(model ? { model } : {}),
    coldStart: Object.fromEntries(
      [...cold].map((
        [subject, samples],
      ) => [
        subject,
        samples.map((c) => ({ initializeMs: r3(c.initializeMs), toolsListMs: r3(c.toolsListMs) })),
      ]),
    ),
    ...(session
      ? {
        longRun: {
          workflowId: LONG_ID,
          steps: cfg.longSteps,
          firstStartMs: r3(session.firstLongStartMs),
          drives: session.drives,
          rssKib: session.rss,
          levels: session.levels.map(levelJson),
          control: levelJson(session.control),
        },
      }
      : {}),
    ...(first
      ? {
        firstCall: Object.fromEntries(
          Object.entries(first).map((
            [k, s],
          ) => [k, { p50: r3(s.p50), samples: s.samples.map(r3) }]),
        ),
      }
      : {}),
    ...(viewer ? { viewer: viewerJson(viewer) } : {}),
    ...(resume ? { resumeSession: resumeJson(resume) } : {}),
    ...(snapshots ? { snapshots: snapshotJson(snapshots) } : {}),
    ...(deepwork ? { deepwork: deepworkJson(deepwork) } : {}),
    ...(hosts ? { hosts: hostBytesJson(hosts) } : {}),
    ...(http ? { http } : {}),
  };
}

function printReport(
  r: {
    cfg: Config;
    rows: Row[];
    floor: Floor;
    targets: ReturnType<typeof benchTargets>;
    session?: Awaited<ReturnType<typeof longSession>>;
    bytes?: Readonly<Record<string, number>>;
  },
): void {
  const m = machine();
  console.log("");
  console.log(
    `waymark MCP stdio benchmark (${r.cfg.mode}; ${
      [...r.cfg.only].join(", ")
    }; Deno ${m.deno.deno}, ${m.os}/${m.arch}, ${m.cpus} CPUs, load ${Deno.loadavg()[0]})`,
  );
  console.log("");
  console.log(table(r.rows, r.floor));
  console.log("");
  console.log(
    "× floor: p50 over the floor's p50 in this run: cold starts over the SDK echo server's cold " +
      "start (spawn → initialize → tools/list), calls over its echo call; `v1:` rows are driven " +
      "by the v1 SDK client (which compiles output schemas and validates results) and divided " +
      "by the same client's floor.",
  );
  if (r.session) sessionNotes(r.cfg, r.session);
  if (r.bytes) {
    console.log("");
    console.log(`bytes a client reads (JSON-RPC lines; answers at ${DEPTH} prior advances):`);
    console.log(bytesTable(r.bytes));
  }
  console.log("");
  console.log("targets (medians; reported, not enforced):");
  console.log(targetLines(r.targets));
}

function sessionNotes(cfg: Config, session: Awaited<ReturnType<typeof longSession>>): void {
  console.log(
    `(ctl): a second ${LONG_ID} run started after the last level, measured at ${
      cfg.levels[0]
    } prior advances (control for warm-up and drift).`,
  );
  for (const d of session.drives) {
    console.log(
      `driving ${d.from} → ${d.to}: ${d.to - d.from} advances, ${d.perAdvanceMs} ms each`,
    );
  }
  const rss = Object.entries(session.rss).map(([k, v]) => `${k}: ${v} KiB`).join(", ");
  console.log(`server RSS after N advances on the long run: ${rss}`);
  if (session.replayMismatches > 0) {
    console.log(
      `WARNING: ${session.replayMismatches} replays differed from the recorded response`,
    );
  }
}

async function main(): Promise<number> {
  const { config: cfg, keep, out, db } = config(Deno.args);
  const database = await benchDatabase(db);
  const dirs = await prepare(cfg);
  log(`database ${database.label}`);
  let server: StdioRpc | null = null;
  const cleanup = async () => {
    await server?.close();
    await database.stop();
    if (keep) log(`kept temp dirs in ${dirs.tmp}`);
    else await Deno.remove(dirs.tmp, { recursive: true }).catch(() => {});
  };
  const onSignal = () => {
    log("interrupted; cleaning up");
    cleanup().finally(() => Deno.exit(130));
  };
  Deno.addSignalListener("SIGINT", onSignal);
  try {
    const json = await measure(cfg, dirs, database);
    await Deno.mkdir(dirname(out), { recursive: true });
    await Deno.writeTextFile(out, `${JSON.stringify(json, null, 2)}\n`);
    console.log(`\nresults: ${relative(Deno.cwd(), out) || out}`);
    return 0;
  } catch (error) {
    const e = error instanceof Error ? error : new Error(String(error));
    const stack = e instanceof BenchFailure || e instanceof RpcError ? "" : `\n${e.stack ?? ""}`;
    console.error(`[bench] FAILED: ${e.name}: ${e.message}${stack}`);
    return 1;
  } finally {
    Deno.removeSignalListener("SIGINT", onSignal);
    server = null;
    await cleanup();
  }
}

if (import.meta.main) {
  Deno.exit(await main());
}
