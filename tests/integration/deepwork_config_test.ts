/**
 * How the DeepWork profile is switched on and configured: `--profile` and `WAYMARK_PROFILE`
 * (validated like every setting), job folders from `--jobs-dir`, `config.json`'s `jobDirs` and
 * `DEEPWORK_ADDITIONAL_JOBS_FOLDERS` (the workspace's own jobs first), the server's lifecycle
 * instructions, and the stderr line every call writes with its tool name and stack.
 */
import assert from "node:assert/strict";
import { Client } from "npm:@modelcontextprotocol/client@2.4.0";
import { StdioClientTransport } from "npm:@modelcontextprotocol/client@2.4.0/stdio";
import { childEnv, connectRich, MAIN, ok, serverArgs, tempHome } from "../helpers/server.ts";
import { jobWorkspace, writeIn } from "../helpers/deepwork.ts";

Deno.test("--profile and WAYMARK_PROFILE are validated; the env variable selects the profile; jobs come from the roots", async () => {
  const home = await tempHome();
  const ws = await jobWorkspace(["tidy"]);
  try {
    for (
      const [args, env, message] of [
        [["--profile", "fancy"], {}, /--profile must be default or deepwork/],
        [[], { WAYMARK_PROFILE: "fancy" }, /WAYMARK_PROFILE must be default or deepwork/],
        [
          ["--quality-gate-max-attempts", "0"],
          {},
          /--quality-gate-max-attempts must be at least 1/,
        ],
      ] as const
    ) {
      const ran = await new Deno.Command(Deno.execPath(), {
        args: ["run", "-A", "--quiet", MAIN, "serve", "--home", home.home, ...args],
        stdin: "null",
        stderr: "piped",
        env: { NO_COLOR: "1", ...env },
      }).output();
      assert.equal(ran.code, 2);
      assert.match(new TextDecoder().decode(ran.stderr), message);
    }
    const client = await connectRich(home.home, {
      cwd: ws.dir,
      env: { WAYMARK_PROFILE: "deepwork" },
    });
    try {
      const names = (await client.listTools()).tools.map((t) => t.name);
      assert.ok(names.includes("finished_step") && !names.includes("continue_workflow"));
      const listed = ok(await client.call("get_workflows", {}));
      assert.deepEqual(listed.jobs.map((j: { name: string }) => j.name), ["tidy"]);
      const instructions = client.client.getInstructions() ?? "";
      for (
        const word of [
          "Discover",
          "Start",
          "Execute",
          "Checkpoint",
          "Iterate",
          "Continue",
          "Complete",
        ]
      ) {
        assert.ok(instructions.includes(`${word}:`), word);
      }
    } finally {
      await client.close();
    }
  } finally {
    await ws.cleanup();
    await home.cleanup();
  }
});

Deno.test("job folders: the workspace's first, then --jobs-dir, config.json jobDirs, DEEPWORK_ADDITIONAL_JOBS_FOLDERS", async () => {
  const home = await tempHome();
  const ws = await jobWorkspace(["tidy"]);
  const extra = await jobWorkspace(["tidy", "nest"]);
  const fromConfig = await jobWorkspace(["research"]);
  const fromEnv = await jobWorkspace(["release_notes"]);
  try {
    await writeIn(
      home.home,
      "config.json",
      JSON.stringify({ jobDirs: [`${fromConfig.dir}/.deepwork/jobs`] }),
    );
    const client = await connectRich(home.home, {
      cwd: ws.dir,
      extraArgs: ["--profile", "deepwork", "--jobs-dir", `${extra.dir}/.deepwork/jobs`],
      env: { DEEPWORK_ADDITIONAL_JOBS_FOLDERS: `/nowhere:${fromEnv.dir}/.deepwork/jobs` },
    });
    try {
      const listed = ok(await client.call("get_workflows", {}));
      assert.deepEqual(listed.jobs.map((j: { name: string }) => j.name), [
        "tidy",
        "nest",
        "research",
        "release_notes",
      ]);
      assert.equal(listed.errors.length, 1);
      assert.equal(listed.errors[0].job_name, "tidy");
      assert.match(listed.errors[0].error, /already defined in .*waymark-dw-ws-.*takes precedence/);
      assert.equal(listed.errors[0].job_dir, `${extra.dir}/.deepwork/jobs/tidy`);
    } finally {
      await client.close();
    }
  } finally {
    for (const d of [ws, extra, fromConfig, fromEnv]) await d.cleanup();
    await home.cleanup();
  }
});

Deno.test("every call is logged to stderr with its tool name and the stack", async () => {
  const home = await tempHome();
  const ws = await jobWorkspace(["nest"]);
  const transport = new StdioClientTransport({
    command: Deno.execPath(),
    args: serverArgs(home.home, ["--profile", "deepwork"]),
    cwd: ws.dir,
    stderr: "pipe",
    env: childEnv(),
  });
  let stderr = "";
  transport.stderr?.on("data", (d: Uint8Array) => stderr += new TextDecoder().decode(d));
  const client = new Client({ name: "waymark-test", version: "1.0.0" });
  await client.connect(transport);
  try {
    await client.callTool({ name: "get_workflows", arguments: {} });
    await client.callTool({
      name: "start_workflow",
      arguments: { goal: "o", job_name: "nest", workflow_name: "outer" },
    });
    await client.callTool({ name: "finished_step", arguments: { outputs: { nope: "x" } } });
    await client.callTool({ name: "finished_step", arguments: { outputs: {} } });
  } finally {
    await client.close();
  }
  try {
    assert.match(stderr, /deepwork get_workflows: ok; stack: \(empty\)/);
    assert.match(stderr, /deepwork start_workflow: ok; stack: nest\/outer@outer_start/);
    assert.match(
      stderr,
      /deepwork finished_step: OUTPUT_INVALID: Unknown output name.*; stack: nest\/outer@outer_start/,
    );
    assert.match(stderr, /deepwork finished_step: ok; stack: nest\/outer@outer_end/);
  } finally {
    await ws.cleanup();
    await home.cleanup();
  }
});
