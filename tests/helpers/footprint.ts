/**
 * A run whose steps leave a footprint: a real git repository, a three-step project workflow
 * driven over a real waymark MCP server with snapshots on, and the host's transcript (a Claude
 * Code session file the test appends to as the host would, with known usage per model call).
 * @module
 */
import { appendFile, mkdir } from "node:fs/promises";
import { join } from "node:path";
import { placeOf } from "./answers.ts";
import { gitRepo } from "./git_repo.ts";
import { connect, ok, tempHome, type TestClient } from "./server.ts";

// deno-lint-ignore no-explicit-any
export type Json = Record<string, any>;

const STEPS = {
  id: "project.footprint",
  name: "Footprint",
  description: "Three steps that change files.",
  version: "1.0.0",
  steps: [
    { id: "add", title: "Add a file", prompt: "Add it." },
    { id: "edit", title: "Edit the app", prompt: "Edit it." },
    { id: "report", title: "Report", prompt: "Say what changed." },
  ],
};

/** An agent's line that must stay text wherever it is shown. */
export const HOSTILE =
  `<script>window.__pwned = 1</script><img src=x onerror="window.__pwned = 2">`;
/** The host session the transcript is of. */
export const SESSION = "5d1f3c8e-2b7a-4c1e-9f0d-7a6b5c4d3e2f";

/** The host's transcript: one model call with the given usage, stamped now. */
export async function modelCall(file: string, id: number, input: number): Promise<void> {
  await appendFile(
    file,
    `${
      JSON.stringify({
        type: "assistant",
        timestamp: new Date().toISOString(),
        sessionId: SESSION,
        message: {
          id: `msg_${id}`,
          content: [{ type: "text", text: "not kept" }],
          usage: { input_tokens: input, output_tokens: 7, cache_read_input_tokens: 100 },
        },
      })
    }\n`,
  );
}

/** Acknowledges the step an answer handed out, with notes. */
export async function ack(client: TestClient, from: Json, notes: string): Promise<Json> {
  return ok(
    await client.call("continue_workflow", {
      stateToken: from.stateToken,
      ackToken: from.ackToken,
      output: { notesMarkdown: notes },
    }),
  );
}

/** Where {@linkcode driveFootprints} left its run: the session, the run and each step's node. */
export interface DroveFootprints {
  /** The session (`ses_…`). */
  sessionId: string;
  /** The run (`run_…`). */
  runId: string;
  /** The node the first step's acknowledgement created. */
  addedNode: string;
  /** The second's. */
  editedNode: string;
  /** The third's (the run is complete there). */
  reportedNode: string;
}

/** Where a footprint run happens. */
export interface FootprintPlace {
  /** The git repository (the workspace). */
  repo: string;
  /** WAYMARK_HOME. */
  home: string;
  /** The host's configuration folder (CLAUDE_CONFIG_DIR). */
  config: string;
  /** Removes all three. */
  cleanup(): Promise<void>;
}

/** A repository with the workflow in it, a waymark home and a host configuration folder. */
export async function footprintPlace(): Promise<FootprintPlace> {
  const repo = await gitRepo({ "app.ts": "export const a = 1;\n", ".gitignore": "ignored/\n" });
  const { home, cleanup } = await tempHome();
  const config = await Deno.makeTempDir({ prefix: "waymark-claude-config-" });
  await mkdir(join(repo.dir, ".waymark", "workflows"), { recursive: true });
  await Deno.writeTextFile(
    join(repo.dir, ".waymark", "workflows", "footprint.json"),
    JSON.stringify(STEPS),
  );
  return {
    repo: repo.dir,
    home,
    config,
    cleanup: async () => {
      await cleanup();
      await repo.cleanup();
      await Deno.remove(config, { recursive: true }).catch(() => {});
    },
  };
}

/**
 * Drives the run: a new file (one call of 1,000 input tokens), an edit with a hostile line (two
 * calls, 2,000 and 3,000), then nothing (one of 500); each call also 7 output and 100 cache-read.
 */
export async function driveFootprints(place: FootprintPlace): Promise<DroveFootprints> {
  const { repo, home, config } = place;
  const transcript = join(config, "projects", "-elsewhere", `${SESSION}.jsonl`);
  await mkdir(join(config, "projects", "-elsewhere"), { recursive: true });
  await Deno.writeTextFile(transcript, "");
  const client = await connect(home, {
    cwd: repo,
    env: { CLAUDE_CODE_SESSION_ID: SESSION, CLAUDE_CONFIG_DIR: config, WAYMARK_SNAPSHOTS: "1" },
  });
  try {
    const started = ok(await client.call("start_workflow", { workflowId: STEPS.id }));
    await Deno.writeTextFile(join(repo, "added.txt"), "one\ntwo\n");
    await modelCall(transcript, 1, 1000);
    const added = await ack(client, started, "Added a file.");
    await Deno.writeTextFile(join(repo, "app.ts"), `export const a = 2;\n// ${HOSTILE}\n`);
    await modelCall(transcript, 2, 2000);
    await modelCall(transcript, 3, 3000);
    const edited = await ack(client, added, "Edited the app.");
    await modelCall(transcript, 4, 500);
    const reported = await ack(client, edited, "Reported.");
    return {
      sessionId: started.session.sessionId as string,
      runId: placeOf(started).runId,
      addedNode: placeOf(added).nodeId,
      editedNode: placeOf(edited).nodeId,
      reportedNode: placeOf(reported).nodeId,
    };
  } finally {
    await client.close();
  }
}
