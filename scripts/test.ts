/**
 * `deno task test`: the whole suite in one `deno test --parallel` process (every test file in its
 * own worker), beside one PostgreSQL server started here for the whole run (each test file takes
 * its own databases on it: `tests/helpers/postgres.ts` reads its directory from
 * `WAYMARK_TEST_PG_DIR`), and one folder for the build artifacts the test files share
 * (`tests/helpers/builds.ts`, `WAYMARK_TEST_BUILD_DIR`). Deno's own report and its `ok | N passed | M failed` line come first,
 * unchanged (`.ci/run` reads that line); then the ten slowest test files, so the next slow file is
 * seen. Arguments go to `deno test` (files, `--filter`); none means `tests/`. See docs/testing.md.
 * @module
 */
import { fileURLToPath } from "node:url";
import { PG_DIR_ENV, postgresBin, startPostgres } from "../tests/helpers/postgres.ts";
import { BUILD_DIR_ENV } from "../tests/helpers/builds.ts";

const ROOT = fileURLToPath(new URL("../", import.meta.url));

/** Test files run at once: Deno's default is one per core, but most of a test's time is spent
 * waiting on the processes, servers and browsers it drives, so twice that keeps the cores busy. */
const JOBS = Deno.env.get("DENO_JOBS") ??
  String(Math.max(2, 2 * navigator.hardwareConcurrency));

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

/** Signals that end the run early: the server is stopped and its folder removed first. */
const SIGNALS: Deno.Signal[] = ["SIGINT", "SIGTERM"];

async function startSharedPostgres(): Promise<{ env: Record<string, string>; stop(): void }> {
  if (Deno.env.get(PG_DIR_ENV) || postgresBin() === null) return { env: {}, stop() {} };
  const server = await startPostgres();
  return { env: { [PG_DIR_ENV]: server.dir }, stop: () => void server.stop() };
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
    const { code } = await new Deno.Command(Deno.execPath(), {
      args: [
        "test",
        "-A",
        "--parallel",
        `--junit-path=${junit}`,
        ...(args.length ? args : ["tests/"]),
      ],
      cwd: ROOT,
      env: { DENO_JOBS: JOBS, [BUILD_DIR_ENV]: `${report}/builds`, ...postgres.env },
      stdout: "inherit",
      stderr: "inherit",
    }).output();
    const text = await Deno.readTextFile(junit).catch(() => "");
    if (text) {
      console.log(`\nslowest test files (${JOBS} at once):\n${slowestLines(text).join("\n")}`);
    }
    return code;
  } finally {
    for (const signal of SIGNALS) Deno.removeSignalListener(signal, interrupted);
    postgres.stop();
    await Deno.remove(report, { recursive: true }).catch(() => {});
  }
}

if (import.meta.main) Deno.exit(await runSuite(Deno.args));
