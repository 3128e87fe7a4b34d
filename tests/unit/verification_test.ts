/**
 * Verification commands without a shell: the command-line splitter (quotes, escapes, and every
 * piece of shell syntax refused rather than passed on literally), the allowlist patterns
 * (words matched one by one, a last `*` for any further words), the user's policy deciding
 * what runs where, and the workflow language compiling both spellings into one shape.
 */
import assert from "node:assert/strict";
import {
  formatCommandLine,
  matchesPattern,
  parseCommandPattern,
  splitCommandLine,
} from "../../engine/verification/command_line.ts";
import {
  parsePolicy,
  planVerification,
  tailBytes,
  type VerificationPolicy,
} from "../../engine/verification/policy.ts";
import { loadWorkflowFile } from "../../engine/workflow/catalog.ts";
import { formatLoadError } from "../../engine/workflow/parse.ts";

function argv(line: string): string[] {
  const split = splitCommandLine(line);
  if (!split.ok) throw new Error(split.message);
  return split.argv;
}

function refused(line: string): string {
  const split = splitCommandLine(line);
  assert.equal(split.ok, false, `${line} should be refused`);
  return (split as { message: string }).message;
}

Deno.test("the splitter honours quotes and escapes and expands nothing", () => {
  assert.deepEqual(argv("deno test -A"), ["deno", "test", "-A"]);
  assert.deepEqual(argv("  npm   test\t--  "), ["npm", "test", "--"]);
  assert.deepEqual(argv(`echo 'a b' "c d" e\\ f`), ["echo", "a b", "c d", "e f"]);
  assert.deepEqual(argv(`grep 'x|y' "say \\"hi\\"" '$HOME' '*.ts'`), [
    "grep",
    "x|y",
    'say "hi"',
    "$HOME",
    "*.ts",
  ]);
  assert.deepEqual(argv(`run a'b'"c"`), ["run", "abc"]);
  assert.deepEqual(argv(`run ''`), ["run", ""]);
  assert.deepEqual(argv(`deno test --filter=a,b x/y.ts`), [
    "deno",
    "test",
    "--filter=a,b",
    "x/y.ts",
  ]);
});

Deno.test("the splitter refuses shell syntax with a message saying what it is", () => {
  for (
    const [line, what] of [
      ["deno test | tee out", "a pipe"],
      ["make && make test", "`&&`"],
      ["a; b", "a command separator"],
      ["deno test > out", "a redirection"],
      ["echo $HOME", "a variable"],
      ["echo `id`", "a command substitution"],
      ["rm *.ts", "a glob"],
      ["ls a?", "a glob"],
      ["echo {a,b}", "a brace expansion"],
      ["cat ~/x", "home-folder"],
      ["(cd x)", "a subshell"],
      ["deno test # comment", "a comment"],
    ]
  ) {
    const message = refused(line!);
    assert.match(message, new RegExp(what!.replace(/[`&]/g, "\\$&")), line);
    assert.match(message, /without a shell/, line);
  }
  assert.match(refused(`echo "$HOME"`), /single quotes/);
  assert.match(refused("echo 'open"), /not closed/);
  assert.match(refused('echo "open'), /not closed/);
  assert.match(refused("FOO=1 deno test"), /environment/);
  assert.match(refused("a\nb"), /one line/);
  assert.match(refused("   "), /empty/);
});

Deno.test("formatCommandLine quotes what needs it, and splits back to the same argv", () => {
  for (
    const words of [
      ["deno", "test", "-A"],
      ["echo", "a b", "it's", "$HOME", "*", "", "~x", "#y", 'q"q'],
    ]
  ) {
    assert.deepEqual(argv(formatCommandLine(words)), words);
  }
  assert.equal(formatCommandLine(["deno", "test", "-A"]), "deno test -A");
});

Deno.test("allowlist patterns match word by word; a last `*` allows any further words, none included", () => {
  const pattern = (source: string) => {
    const parsed = parseCommandPattern(source);
    if (!parsed.ok) throw new Error(parsed.message);
    return parsed.pattern;
  };
  const denoTest = pattern("deno test *");
  assert.equal(matchesPattern(denoTest, ["deno", "test"]), true);
  assert.equal(matchesPattern(denoTest, ["deno", "test", "-A", "x_test.ts"]), true);
  assert.equal(matchesPattern(denoTest, ["deno", "run", "-A"]), false);
  assert.equal(matchesPattern(denoTest, ["deno"]), false);
  assert.equal(matchesPattern(denoTest, ["/usr/bin/deno", "test"]), false, "no path lookup");
  const npmTest = pattern("npm test");
  assert.equal(matchesPattern(npmTest, ["npm", "test"]), true);
  assert.equal(matchesPattern(npmTest, ["npm", "test", "--", "x"]), false, "exact without `*`");
  assert.equal(matchesPattern(npmTest, ["npm", "testing"]), false, "whole words only");
  const quoted = pattern(`run 'a b' '*'`);
  assert.equal(matchesPattern(quoted, ["run", "a b", "*"]), true, "a quoted star is literal");
  assert.equal(matchesPattern(quoted, ["run", "a b", "x"]), false);
  for (const bad of ["deno * test", "*", "deno test*", "deno $x"]) {
    assert.equal(parseCommandPattern(bad).ok, false, bad);
  }
});

const WS = "/work/project";

function policy(allow: string[], extra: Record<string, unknown> = {}): VerificationPolicy {
  const parsed = parsePolicy({ workspaces: { [WS]: { allow, ...extra } } }, (k) => k);
  if (!parsed.ok) throw new Error(parsed.message);
  return parsed.policy;
}

Deno.test("the user's policy decides: off by default, per workspace, allowlisted, capped", () => {
  const verify = { argv: ["deno", "test", "-A"], timeoutSeconds: 900 };
  const noRunner = planVerification(verify, { policy: null, workspace: WS });
  assert.equal(noRunner.kind, "skip");
  assert.equal(noRunner.kind === "skip" && noRunner.warning.code, "VERIFICATION_UNAVAILABLE");
  const noFolder = planVerification(verify, { policy: policy(["deno test *"]), workspace: null });
  assert.equal(noFolder.kind === "skip" && noFolder.evidence.verdict, "unavailable");
  const off = planVerification(verify, { policy: { workspaces: [] }, workspace: WS });
  assert.equal(off.kind === "skip" && off.warning.code, "VERIFICATION_NOT_ALLOWED");
  assert.match(off.kind === "skip" ? off.warning.message : "", /config\.json.*deno test -A/);
  const other = planVerification(verify, { policy: policy(["npm test"]), workspace: WS });
  assert.equal(other.kind === "skip" && other.evidence.verdict, "not_allowed");
  const elsewhere = planVerification(verify, {
    policy: policy(["deno test *"]),
    workspace: "/work/project-two",
  });
  assert.equal(elsewhere.kind, "skip", "a sibling folder with a shared prefix is not inside");
  const run = planVerification(verify, {
    policy: policy(["deno test *"], { timeoutSeconds: 60, env: ["PATH"] }),
    workspace: `${WS}/packages/a`,
  });
  assert.equal(run.kind, "run", "a subfolder of a configured workspace");
  assert.deepEqual(run.kind === "run" && run.request, {
    workspace: `${WS}/packages/a`,
    cwd: null,
    argv: ["deno", "test", "-A"],
    timeoutMs: 60_000,
    outputBytes: 16384,
    env: ["PATH"],
  });
  const shorter = planVerification({ ...verify, timeoutSeconds: 5 }, {
    policy: policy(["deno test *"]),
    workspace: WS,
  });
  assert.equal(shorter.kind === "run" && shorter.request.timeoutMs, 5000);
  assert.equal(parsePolicy({ workspaces: { [WS]: { allow: ["a * b"] } } }, (k) => k).ok, false);
});

Deno.test("tailBytes keeps the end within the byte budget, on a character boundary", () => {
  assert.equal(tailBytes("short", 10), "short");
  const cut = tailBytes("aaaa€€€€", 10);
  assert.ok(new TextEncoder().encode(cut).length <= 10);
  assert.equal(cut, "…€€");
});

async function load(step: Record<string, unknown>) {
  const text = JSON.stringify({
    id: "user.v",
    name: "V",
    description: "d",
    version: "1.0.0",
    steps: [{ id: "s", title: "S", prompt: "Do it.", ...step }],
  });
  return await loadWorkflowFile({ source: "user", file: "v.json", text });
}

Deno.test("both spellings compile into one verify shape, named in the prompt", async () => {
  const ours = await load({
    verify: { run: ["deno", "test", "-A"], cwd: "pkg", timeoutSeconds: 30, prompt: "Unit tests." },
  });
  assert.ok(ours.ok, ours.ok ? "" : formatLoadError(ours.error));
  const step = ours.workflow.compiled.steps[0]!;
  assert.equal(step.kind, "step");
  assert.deepEqual(step.kind === "step" && step.verify, {
    argv: ["deno", "test", "-A"],
    cwd: "pkg",
    timeoutSeconds: 30,
    prompt: "Unit tests.",
  });
  assert.match(step.kind === "step" ? step.promptTemplate : "", /`deno test -A` \(in `pkg`\)/);
  const theirs = await load({ verification: { command: "npm run 'unit tests'" } });
  assert.ok(theirs.ok);
  const s2 = theirs.workflow.compiled.steps[0]!;
  assert.deepEqual(s2.kind === "step" && s2.verify, { argv: ["npm", "run", "unit tests"] });
  const plain = await load({});
  assert.ok(plain.ok);
  assert.equal("verify" in plain.workflow.compiled.steps[0]!, false, "other hashes unchanged");
});

Deno.test("a command needing a shell, a placeholder or an escaping folder is refused at load", async () => {
  for (
    const [step, expected] of [
      [{ verification: { command: "npm test && npm run lint" } }, /verification\.command.*`&`/],
      [{ verify: { run: ["deno", "test", "{{target}}"] } }, /placeholders/],
      [{ verify: { run: ["x"], cwd: "../other" } }, /inside the workspace/],
      [{ verify: { run: ["x"], cwd: "/abs" } }, /inside the workspace/],
      [{ verify: { run: ["x"] }, verification: { command: "x" } }, /not both/],
      [{ verify: { run: [] } }, /verify\.run/],
      [{ verify: { run: ["x"], shell: true } }, /shell/],
    ] as const
  ) {
    const loaded = await load(step as Record<string, unknown>);
    assert.equal(loaded.ok, false, JSON.stringify(step));
    if (!loaded.ok) assert.match(formatLoadError(loaded.error), expected, JSON.stringify(step));
  }
});
