/**
 * Test helpers for the DeepWork profile: a workspace holding the job files written for the
 * tests (`tests/fixtures/deepwork/jobs`), a server on it in the deepwork profile, and the
 * command line of the test reviewer.
 * @module
 */
import { fileURLToPath } from "node:url";
import { connect, type TestClient } from "./server.ts";

/** The job files written for the tests. */
export const JOBS = fileURLToPath(new URL("../fixtures/deepwork/jobs/", import.meta.url));
/** The reviewer program written for the tests. */
export const REVIEWER = fileURLToPath(new URL("../fixtures/deepwork/reviewer.ts", import.meta.url));

async function copyDir(from: string, to: string): Promise<void> {
  await Deno.mkdir(to, { recursive: true });
  for await (const entry of Deno.readDir(from)) {
    if (entry.isDirectory) await copyDir(`${from}/${entry.name}`, `${to}/${entry.name}`);
    else await Deno.copyFile(`${from}/${entry.name}`, `${to}/${entry.name}`);
  }
}

/** A temporary workspace with `.deepwork/jobs/<job>` for each job named (default: all). */
export async function jobWorkspace(
  jobs?: string[],
): Promise<{ dir: string; cleanup(): Promise<void> }> {
  const dir = await Deno.realPath(await Deno.makeTempDir({ prefix: "waymark-dw-ws-" }));
  const names = jobs ?? [...Deno.readDirSync(JOBS)].map((e) => e.name);
  for (const name of names) await copyDir(`${JOBS}${name}`, `${dir}/.deepwork/jobs/${name}`);
  return { dir, cleanup: () => Deno.remove(dir, { recursive: true }).catch(() => {}) };
}

/** The `--review-command` that runs the test reviewer in `mode`. */
export function reviewCommand(mode: string, counter?: string): string {
  const q = (s: string) => `'${s.replaceAll("'", "'\\''")}'`;
  return [Deno.execPath(), "run", "-A", "--quiet", REVIEWER, mode, ...(counter ? [counter] : [])]
    .map(q).join(" ");
}

/** A deepwork-profile server on `home`, in `workspace` (its cwd: the client has no roots). */
export function connectDeepwork(
  home: string,
  workspace: string,
  options: { client?: "v1" | "v2"; extraArgs?: string[]; env?: Record<string, string> } = {},
): Promise<TestClient> {
  return connect(home, {
    client: options.client,
    cwd: workspace,
    env: options.env,
    extraArgs: ["--profile", "deepwork", ...(options.extraArgs ?? [])],
  });
}

/** Writes a file in the workspace (folders created). */
export async function writeIn(workspace: string, path: string, text: string): Promise<void> {
  const full = `${workspace}/${path}`;
  await Deno.mkdir(full.slice(0, full.lastIndexOf("/")), { recursive: true });
  await Deno.writeTextFile(full, text);
}

/** A one-step job whose step names a required file output and an optional list, with a review. */
export const MEMO_JOB = `name: memo
summary: Write memos
workflows:
  - name: write
    summary: Write a memo, with its attachments
    steps: [draft]
steps:
  - id: draft
    name: Draft
    description: Draft the memo
    instructions_file: steps/draft.md
    outputs:
      memo.md: {type: file, description: The memo, required: true}
      attachments: {type: files, description: Anything attached, required: false}
    reviews:
      - run_each: step
        quality_criteria:
          Short: The memo fits on one page.
`;
