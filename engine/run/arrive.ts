/**
 * What a node a call just created brings about for delegation: arriving at a parallel step opens
 * its children; arriving at a synthesis step collects their results; a child run ending may
 * settle its parent. The answer is completed here before it is recorded, and the events to
 * append after the node's own are returned.
 * @module
 */
import type { DomainEvent } from "../model/events.ts";
import { runLabel } from "../model/ids.ts";
import type { EngineDeps, NodeRecord, StoreReader } from "../model/ports.ts";
import type { StepResponse } from "../answers/responses.ts";
import type { CompiledWorkflow } from "../workflow/compiled.ts";
import { currentStep } from "../workflow/interpreter.ts";
import { delegationViews, synthesisSection } from "../answers/delegation_views.ts";
import { addWarnings } from "../answers/node_response.ts";
import {
  collectDigest,
  type Delegates,
  delegationHome,
  openChildren,
  settledEvents,
} from "./delegations.ts";

type Deps = Pick<EngineDeps, "keyring" | "random"> & { store: StoreReader };

/** Completes `response` for the node `created` (reached by acknowledging `acked`, if any). */
export async function arrive(
  deps: Deps,
  at: {
    acked: NodeRecord | null;
    created: NodeRecord;
    compiled: CompiledWorkflow;
    response: StepResponse;
    delegates: Delegates;
  },
): Promise<DomainEvent[]> {
  const { store } = deps;
  const step = currentStep(at.compiled, at.created.state);
  if (step === null) return await ended(store, at);
  if (step.delegations) {
    const opened = await openChildren(store, at.created, at);
    addWarnings(at.response, opened.warnings);
    if (opened.children.length > 0) {
      at.response.delegations = await delegationViews(deps, opened.children, { step });
    }
    return opened.events;
  }
  if (step.synthesisOf === undefined || !at.acked || !at.response.pending) return [];
  const home = await delegationHome(store, at.acked);
  const digest = await collectDigest(store, await store.getDelegations(home.runId, home.nodeId));
  at.response.pending.prompt += synthesisSection(digest);
  return [{
    kind: "delegations_collected",
    sessionId: at.created.sessionId,
    runId: at.created.runId,
    nodeId: at.created.nodeId,
    stepId: step.id,
    children: digest,
  }];
}

/** A run that just ended: when it is a delegated child, it may be the last of its siblings. */
export async function ended(
  store: StoreReader,
  at: { created: Pick<NodeRecord, "sessionId" | "runId">; response?: StepResponse },
): Promise<DomainEvent[]> {
  const link = await store.getDelegationLink(at.created.runId);
  if (!link) return [];
  const events = await settledEvents(store, { ending: at.created, link });
  if (at.response) {
    at.response.delegatedFrom = {
      parentRunId: runLabel(link.parentRunId),
      parentStepId: link.stepId,
      index: link.index,
      settled: events.length > 0,
    };
  }
  return events;
}
