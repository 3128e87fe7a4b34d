/**
 * The store contract for what a call carries: on both stores, every node reads back the context
 * in effect at it, across changes, forks and checkpoints, though unchanged contexts are not
 * copied; and a replay tells whether its payload differs from the one recorded.
 * @module
 */
import assert from "node:assert/strict";
import type { EngineDeps } from "../../engine/model/ports.ts";
import type { StepResponse } from "../../engine/answers/responses.ts";
import { checkpointWorkflow } from "../../engine/use_cases/checkpoint_workflow.ts";
import { continueWorkflow } from "../../engine/use_cases/continue_workflow.ts";
import { parseRunLabel } from "../../engine/model/ids.ts";
import { ack, checkpoint, engineDeps, start, type Subject, SUBJECTS, value } from "./subjects.ts";
import { placeOf } from "../helpers/answers.ts";

async function contextAt(subject: Subject, at: StepResponse): Promise<unknown> {
  const node = await subject.store.getNode(parseRunLabel(placeOf(at).runId)!, placeOf(at).nodeId);
  return node?.context;
}

async function ackWith(
  deps: EngineDeps,
  from: StepResponse,
  context: Record<string, unknown>,
): Promise<StepResponse> {
  return value(
    await continueWorkflow(deps, {
      stateToken: from.stateToken,
      ackToken: from.ackToken!,
      context,
      output: { notesMarkdown: "next" },
    }),
    "ack with context",
  );
}

for (const [storeName, open] of Object.entries(SUBJECTS)) {
  Deno.test(`${storeName}: each node reads back its own context across changes, forks and checkpoints`, async () => {
    const subject = await open();
    try {
      const deps = await engineDeps(subject.store);
      const root = await start(deps, "project.long");
      const a = await ackWith(deps, root, { ticket: "T-1" });
      const b = await ack(deps, a, "unchanged");
      const c = await ackWith(deps, b, { size: 2 });
      const note = await checkpoint(deps, c, "a checkpoint");
      // A fork from `a` with a context that another branch already had.
      const fresh = value(await continueWorkflow(deps, { stateToken: a.stateToken }), "rehydrate");
      const fork = await ackWith(deps, fresh, { size: 2 });
      const back = await ackWith(deps, fork, { size: 1 });
      const expected: [StepResponse, unknown][] = [
        [root, {}],
        [a, { ticket: "T-1" }],
        [b, { ticket: "T-1" }],
        [c, { ticket: "T-1", size: 2 }],
        [note, { ticket: "T-1", size: 2 }],
        [fork, { ticket: "T-1", size: 2 }],
        [back, { ticket: "T-1", size: 1 }],
      ];
      for (const [at, context] of expected) {
        assert.deepEqual(await contextAt(subject, at), context, placeOf(at).nodeId);
      }
    } finally {
      await subject.cleanup();
    }
  });
}

for (const [storeName, open] of Object.entries(SUBJECTS)) {
  Deno.test(`${storeName}: a replay reports whether its payload differs from the recorded one`, async () => {
    const subject = await open();
    try {
      const deps = await engineDeps(subject.store);
      const root = await start(deps, "project.plain");
      const seen: boolean[] = [];
      const onReplay = (r: { payloadDiffers: boolean }) => seen.push(r.payloadDiffers);
      const call = (notes: string, context?: Record<string, unknown>) =>
        continueWorkflow(deps, {
          stateToken: root.stateToken,
          ackToken: root.ackToken!,
          output: { notesMarkdown: notes },
          ...(context ? { context } : {}),
        }, { onReplay });
      const first = value(await call("first", { a: 1 }));
      assert.deepEqual(seen, [], "the first call is no replay");
      assert.deepEqual(value(await call("first", { a: 1 })), first);
      assert.deepEqual(value(await call("other", { a: 1 })), first);
      assert.deepEqual(value(await call("first", { a: 2 })), first);
      assert.deepEqual(value(await call("first")), first);
      assert.deepEqual(seen, [false, true, true, true]);

      const cp = (notes: string) =>
        checkpointWorkflow(deps, {
          stateToken: first.stateToken,
          checkpointToken: first.checkpointToken,
          output: { notesMarkdown: notes },
        }, { onReplay });
      value(await cp("kept"));
      value(await cp("kept"));
      value(await cp("dropped"));
      assert.deepEqual(seen.slice(4), [false, true]);
    } finally {
      await subject.cleanup();
    }
  });
}
