/**
 * Workflows for delegation tests: a parent whose parallel step delegates three reviews to a
 * two-step child workflow, written as project workflows of a workspace.
 * @module
 */
import { join } from "node:path";
import { keepSession } from "./answers.ts";
import { ok, type TestClient } from "./server.ts";

/** The parent workflow's id. */
export const PARENT_ID = "project.fanout";
/** The child workflow's id. */
export const CHILD_ID = "project.review_part";

const CHILD = {
  id: CHILD_ID,
  name: "Review one part",
  description: "Reviews one part of a change and reports findings.",
  version: "1.0.0",
  steps: [
    { id: "read", title: "Read the part", prompt: "Read {{part}} closely ({{area}})." },
    { id: "report", title: "Report", prompt: "Report what you found in {{part}}." },
  ],
};

const PARENT = {
  id: PARENT_ID,
  name: "Fan out a review",
  description: "Prepares, delegates three part reviews in parallel, synthesizes, finishes.",
  version: "1.0.0",
  steps: [
    { id: "prepare", title: "Prepare", prompt: "Decide the area to review." },
    {
      id: "reviews",
      type: "parallel",
      title: "Parallel reviews",
      parallelDelegations: ["api", "storage", "docs"].map((part) => ({
        workflowId: CHILD_ID,
        goal: `Review the ${part}`,
        contextMapping: { area: "area" },
        args: { part },
        modelTier: "lightweight",
      })).concat([{
        workflowId: CHILD_ID,
        goal: "Review the UI",
        runCondition: { var: "hasUi", equals: true },
        contextMapping: { area: "area" },
        args: { part: "ui" },
        modelTier: "lightweight",
      } as never]),
      synthesis: { prompt: "Merge the three reviews into one verdict." },
    },
    { id: "finish", title: "Finish", prompt: "Write the final summary." },
  ],
};

/** Writes the parent and child workflows into `<workspace>/.waymark/workflows/`. */
export async function writeDelegationWorkflows(workspace: string): Promise<void> {
  const dir = join(workspace, ".waymark", "workflows");
  await Deno.mkdir(dir, { recursive: true });
  await Deno.writeTextFile(join(dir, "fanout.json"), JSON.stringify(PARENT));
  await Deno.writeTextFile(join(dir, "review_part.json"), JSON.stringify(CHILD));
}

/** Drives a child run from its delegation token to completion; returns every answer. */
export async function driveChild(
  client: TestClient,
  token: string,
  notes: (stepId: string) => string,
  // deno-lint-ignore no-explicit-any
): Promise<Record<string, any>[]> {
  const answers = [ok(await client.call("start_workflow", { delegationToken: token }))];
  while (!answers.at(-1)!.isComplete) {
    const at = answers.at(-1)!;
    answers.push(ok(
      await client.call("continue_workflow", {
        stateToken: at.stateToken,
        ackToken: at.ackToken,
        output: { notesMarkdown: notes(at.pending.stepId) },
      }),
    ));
  }
  return answers;
}

/** A temporary workspace holding the delegation workflows; `cleanup` removes it. */
export async function delegationWorkspace(): Promise<
  { workspace: string; args: string[]; cleanup(): Promise<void> }
> {
  const workspace = await Deno.makeTempDir({ prefix: "waymark-deleg-ws-" });
  await writeDelegationWorkflows(workspace);
  return {
    workspace,
    args: ["--workspace", workspace],
    cleanup: () => Deno.remove(workspace, { recursive: true }).catch(() => {}),
  };
}

/** Starts the parent (with `goal`) and acknowledges `prepare`: the answer lists the children. */
export async function reachParallel(
  client: TestClient,
  goal?: string,
  // deno-lint-ignore no-explicit-any
): Promise<Record<string, any>> {
  const started = ok(
    await client.call("start_workflow", { workflowId: PARENT_ID, ...(goal ? { goal } : {}) }),
  );
  const next = ok(
    await client.call("continue_workflow", {
      stateToken: started.stateToken,
      ackToken: started.ackToken,
      context: { area: "billing", hasUi: false },
      output: { notesMarkdown: "Area: billing." },
    }),
  );
  return keepSession(next as { stateToken: string }, started);
}

/** Takes up a child run with its delegation token and abandons it with `explanation`. */
export async function abandonChild(
  client: TestClient,
  token: string,
  explanation: string,
  // deno-lint-ignore no-explicit-any
): Promise<Record<string, any>> {
  const started = ok(await client.call("start_workflow", { delegationToken: token }));
  return ok(await client.call("abort_workflow", { stateToken: started.stateToken, explanation }));
}
