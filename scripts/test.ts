/**
 * `deno task test`: the whole suite in one `deno test --parallel` process (the files of a folder
 * sharing workers in groups, `scripts/test_groups.ts`), beside one PostgreSQL server started here
 * for the whole run (each test file takes its own databases on it: `tests/helpers/postgres.ts`
 * reads its directory from `WAYMARK_TEST_PG_DIR`), and one folder for the build artifacts the test
 * files share (`tests/helpers/builds.ts`, `WAYMARK_TEST_BUILD_DIR`). Deno's own report and its
 * `ok | N passed | M failed` line come first, unchanged (`.ci/run` reads that line); then the ten
 * slowest test files, so the next slow file is seen. Arguments go to `deno test` (files,
 * `--filter`); none means every test file under `tests/`, the slow folders first, type-checked
 * beside the run as `deno task check` checks. See docs/testing.md.
 * @module
 */
import { fileURLToPath } from "node:url";
import { PG_DIR_ENV, postgresBin, startPostgres } from "../tests/helpers/postgres.ts";
import { BUILD_DIR_ENV } from "../tests/helpers/builds.ts";
import { groups, writeGroups } from "./test_groups.ts";

const ROOT = fileURLToPath(new URL("../", import.meta.url));

/** Test files run at once: Deno's default is one per core, but most of a test's time is spent
 * waiting on the processes, servers and browsers it drives, so twice that keeps the cores busy. */
const JOBS = Deno.env.get("DENO_JOBS") ??
  String(Math.max(2, 2 * navigator.hardwareConcurrency));

/**
 * V8 flags for every Deno process of the run: the runner's workers, and the servers and commands
 * the tests start, which inherit its environment. A young generation of 8 MB from the start
 * (V8 begins at 1 MB and grows it) spares a process that lives half a second most of its
 * collections while it loads (a `serve` start and first call: 7 scavenges and 3 full collections
 * → 3 and 2, 0.35 → 0.31 s of CPU; `doctor` 0.32 → 0.28 s). See docs/testing.md for the whole
 * run's figures. One's own DENO_V8_FLAGS wins (an empty one, which Deno refuses, does not).
 */
const V8_FLAGS = Deno.env.get("DENO_V8_FLAGS") || "--min-semi-space-size=8";

/** Seconds per test file from Deno's JUnit report (its tests' times; steps are inside them). */
export function fileTimes(junit: string): { file: string; seconds: number }[] {
  const times = new Map<string, number>();
  for (const m of junit.matchAll(/<testcase name="([^"]*)" classname="([^"]*)" time="([\d.]+)"/g)) {
    const [, name, file, time] = m;
    if (name!.includes(" &gt; ")) continue; // a step, already counted in its test
    times.set(file!, (times.get(file!) ?? 0) + Number(time));
  }
  return [...times].map(([file, seconds]) => ({ file, seconds }))
    .sort((a, b) => b.seconds - a.seconds);
}

/** The slowest `n` files as lines to print. */
export function slowestLines(junit: string, n = 10): string[] {
  return fileTimes(junit).slice(0, n).map(({ file, seconds }) =>
    `${seconds.toFixed(1).padStart(7)} s  ${file}`
  );
}

/** Folders whose files take longest (real hosts, the PostgreSQL reruns, Chromium, processes),
 * started first so that the run does not end waiting on one of them alone. */
const SLOW_FIRST = ["tests/hosts/", "tests/postgres/", "tests/browser/", "tests/integration/"];

/** `files` with the slow folders' first, each folder's in name order. */
export function ordered(files: readonly string[]): string[] {
  const rank = (file: string) => {
    const i = SLOW_FIRST.findIndex((dir) => file.startsWith(dir));
    return i < 0 ? SLOW_FIRST.length : i;
  };
  return [...files].sort((a, b) => rank(a) - rank(b) || (a < b ? -1 : a > b ? 1 : 0));
}

/** The names `deno test` takes as test files by default (`x_test.ts`, `x.test.mjs`, …). */
const TEST_FILE = /(^|[._])test\.(ts|tsx|mts|js|mjs|jsx)$/;

/** The suite's test files under `tests/`, relative to the repository. */
async function testFiles(dir = "tests"): Promise<string[]> {
  const out: string[] = [];
  for await (const entry of Deno.readDir(`${ROOT}${dir}`)) {
    const path = `${dir}/${entry.name}`;
    if (entry.isDirectory) out.push(...await testFiles(path));
    else if (entry.isFile && TEST_FILE.test(entry.name)) out.push(path);
  }
  return out;
}

/**
 * The type check `deno task check` runs (its arguments read from `deno.json`, so the two never
 * differ): Deno keeps a check's result by its set of roots, so after `deno task check` (as
 * `.ci/run` does) this finds it done; `deno check tests/` alone would check everything again.
 */
export async function checkArgs(): Promise<string[]> {
  const config = JSON.parse(await Deno.readTextFile(`${ROOT}deno.json`));
  const task = String(config.tasks?.check ?? "");
  const [deno, check, ...roots] = task.trim().split(/\s+/);
  if (deno !== "deno" || check !== "check" || roots.length === 0) {
    throw new Error(`deno.json's check task is not "deno check ROOTS...": ${task}`);
  }
  return [check, ...roots];
}

/** `deno task check`'s type check, its output kept for the end of the run. */
async function typeCheck(): Promise<{ success: boolean; output: string }> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: await checkArgs(),
    cwd: ROOT,
    stdout: "piped",
    stderr: "piped",
    env: { NO_COLOR: "1" },
  }).output();
  const text = new TextDecoder().decode(out.stderr) + new TextDecoder().decode(out.stdout);
  return {
    success: out.success,
    output: text.split("\n").filter((l) => !/^Check /.test(l)).join("\n"),
  };
}

/** Signals that end the run early: the server is stopped and its folder removed first. */
const SIGNALS: Deno.Signal[] = ["SIGINT", "SIGTERM"];

async function startSharedPostgres(): Promise<{ env: Record<string, string>; stop(): void }> {
  if (Deno.env.get(PG_DIR_ENV) || postgresBin() === null) return { env: {}, stop() {} };
  const server = await startPostgres();
  return { env: { [PG_DIR_ENV]: server.dir }, stop: () => void server.stop() };
}

/** The whole suite as `deno test` takes it: the files in start order, groups sharing a worker
 * written into `dir` (`scripts/test_groups.ts`). */
async function wholeSuite(dir: string): Promise<string[]> {
  const files = await Promise.all(
    ordered(await testFiles()).map(async (path) => ({
      path,
      source: await Deno.readTextFile(`${ROOT}${path}`),
    })),
  );
  await Deno.mkdir(dir);
  return await writeGroups(groups(files), { root: ROOT, dir });
}

/** Runs the suite; resolves to `deno test`'s exit code. */
export async function runSuite(args: string[]): Promise<number> {
  const report = await Deno.makeTempDir({ prefix: "waymark-test-run-" });
  const postgres = await startSharedPostgres();
  const interrupted = () => {
    postgres.stop();
    Deno.exit(130);
  };
  for (const signal of SIGNALS) Deno.addSignalListener(signal, interrupted);
  try {
    const junit = `${report}/junit.xml`;
    await Deno.mkdir(`${report}/builds`);
    // The whole suite is type-checked beside the run rather than before it, so both cores work
    // from the first second; a run of chosen files or filters checks them first, as usual.
    const whole = args.length === 0;
    const check = whole ? typeCheck() : Promise.resolve(null);
    const { code } = await new Deno.Command(Deno.execPath(), {
      args: [
        "test",
        "-A",
        "--parallel",
        `--junit-path=${junit}`,
        ...(whole ? ["--no-check", ...await wholeSuite(`${report}/groups`)] : args),
      ],
      cwd: ROOT,
      env: {
        DENO_JOBS: JOBS,
        DENO_V8_FLAGS: V8_FLAGS,
        [BUILD_DIR_ENV]: `${report}/builds`,
        ...postgres.env,
      },
      stdout: "inherit",
      stderr: "inherit",
    }).output();
    const text = await Deno.readTextFile(junit).catch(() => "");
    if (text) {
      console.log(`\nslowest test files (${JOBS} at once):\n${slowestLines(text).join("\n")}`);
    }
    const checked = await check;
    if (checked && !checked.success) {
      console.log(`\ntype check failed (deno task check):\n${checked.output}`);
      return code || 1;
    }
    return code;
  } finally {
    for (const signal of SIGNALS) Deno.removeSignalListener(signal, interrupted);
    postgres.stop();
    await Deno.remove(report, { recursive: true }).catch(() => {});
  }
}

if (import.meta.main) Deno.exit(await runSuite(Deno.args));
