/**
 * A real git repository for the review tests with one change of every kind (committed on a
 * branch, staged, unstaged, untracked, ignored, deleted), the rules written for them (a root and
 * a nested `.deepreview`), and a home to serve it from.
 * @module
 */
import { tempHome, type TestClient } from "./server.ts";
import { connectDeepwork, writeIn } from "./deepwork.ts";
import { commitIn, git, gitRepo } from "./git_repo.ts";

/** The root `.deepreview`: an individual rule with references, a matches_together rule. */
export const ROOT_RULES = `# rules for the whole project
python_style:
  description: "Python files follow the house style."
  match:
    include: ["**/*.py"]
    exclude: ["src/vendor/**"]
  review:
    strategy: individual
    instructions: "Check naming and docstrings."
    reference_files:
      - { path: "docs/style.md", description: "House style" }
      - { path: "docs/missing.md", description: "Not written yet" }
together:
  description: "The changed modules hang together."
  match:
    include: ["src/*.py"]
  review:
    strategy: matches_together
    instructions: { file: "docs/together.md" }
    agent: { claude: "code-reviewer" }
    additional_context:
      all_changed_filenames: true
      unchanged_matching_files: true
`;

/** The nested `src/.deepreview`: an all_changed_files rule with globs relative to src/. */
export const SRC_RULES = `local_rule:
  description: "Anything in src that changed, seen with the whole change."
  match:
    include: ["*.py"]
  review:
    strategy: all_changed_files
    instructions: "Read the whole change."
`;

/** A repository on a branch with one change of every kind. */
export async function changedRepo(): Promise<{ dir: string; cleanup(): Promise<void> }> {
  const repo = await gitRepo({
    ".gitignore": "build/\n*.log\n",
    ".deepreview": ROOT_RULES,
    "src/.deepreview": SRC_RULES,
    "docs/style.md": "Use snake_case.\n",
    "docs/together.md": "Check the modules agree on names.\n",
    "src/app.py": "def main():\n    pass\n",
    "src/util.py": "def helper():\n    pass\n",
    "src/stable.py": "X = 1\n",
    "src/vendor/lib.py": "Y = 2\n",
    "old.py": "gone = True\n",
  });
  await git(repo.dir, "checkout", "-q", "-b", "feature");
  await commitIn(repo.dir, { "src/app.py": "def main():\n    return 1\n" });
  await writeIn(repo.dir, "src/staged.py", "S = 1\n");
  await git(repo.dir, "add", "src/staged.py");
  await writeIn(repo.dir, "src/util.py", "def helper():\n    return 2\n");
  await writeIn(repo.dir, "src/new.py", "N = 1\n");
  await writeIn(repo.dir, "build/gen.py", "G = 1\n");
  await writeIn(repo.dir, "debug.log", "log\n");
  await writeIn(repo.dir, "src/vendor/lib.py", "Y = 3\n");
  await Deno.remove(`${repo.dir}/old.py`);
  return repo;
}

/** Runs `body` with servers on a fresh home in `repo`, removing both afterwards. */
export async function withRepo(
  repo: { dir: string; cleanup(): Promise<void> },
  body: (at: { connect(): Promise<TestClient>; dir: string; home: string }) => Promise<void>,
): Promise<void> {
  const home = await tempHome();
  const clients: TestClient[] = [];
  try {
    await body({
      dir: repo.dir,
      home: home.home,
      connect: async () => {
        const c = await connectDeepwork(home.home, repo.dir, { extraArgs: ["--no-quality-gate"] });
        clients.push(c);
        return c;
      },
    });
  } finally {
    for (const c of clients) await c.close().catch(() => {});
    await repo.cleanup();
    await home.cleanup();
  }
}

/** A review task, loosely typed for assertions. */
export type Task =
  & { review_id: string; rule_name: string; files: string[]; prompt: string }
  & Record<
    string,
    unknown
  >;

/** The tasks of one rule. */
export const byRule = (tasks: Task[], rule: string): Task[] =>
  tasks.filter((t) => t.rule_name === rule);
