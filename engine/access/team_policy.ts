/**
 * The team policy, decided here and nowhere else. Every member may read every session (the
 * viewer, `resume_session`, a rehydrate). Writing to a run (an ack, a checkpoint, an abort)
 * is for the principal who started it, or for any member when the run's access is `team`;
 * anything else is refused with `RUN_NOT_YOURS` before a byte is written. A call without a
 * principal (stdio, or HTTP without authentication) is not checked: it acts with the
 * authority of whoever holds the database's credentials. A run started without a principal
 * has no owner, so any caller may act on it. The decision reads only the run's row, which
 * every write path loads anyway.
 * @module
 */
import type { DomainEvent } from "../model/events.ts";
import { runLabel } from "../model/ids.ts";
import type {
  AttemptKey,
  AttemptOrNode,
  EngineDeps,
  RunOwnership,
  Store,
  StoreWriter,
} from "../model/ports.ts";
import type { Principal } from "./principal.ts";
import { fail, type Result } from "../model/result.ts";
import type { RunAccess } from "../model/vocabulary.ts";

/** The access given to runs that authenticated calls start, unless the server says otherwise. */
export const DEFAULT_RUN_ACCESS: RunAccess = "owner";

/** A principal as people read it: its display name (else its subject), marked when a bot. */
export function principalLabel(principal: Principal): string {
  const name = principal.displayName || principal.subject;
  return principal.kind === "bot" ? `${name} (bot)` : name;
}

/** `null` when `actor` may act on the run, else the `RUN_NOT_YOURS` refusal. */
export function refuseActor(run: RunOwnership, actor: Principal | undefined): Result<never> | null {
  if (!actor || !run.owner || run.access === "team") return null;
  if (run.owner.subject === actor.subject) return null;
  const owner = principalLabel(run.owner);
  return fail(
    "RUN_NOT_YOURS",
    `Run ${
      runLabel(run.runId)
    } was started by ${owner} and only they may continue it (its access is "owner"); nothing was written. Read it freely (continue_workflow with only the stateToken, resume_session, the viewer); to carry the work on yourself, start the workflow again, or ask ${owner} to continue it or a server run with --run-access team.`,
    {
      details: {
        runId: runLabel(run.runId),
        owner: { subject: run.owner.subject, displayName: run.owner.displayName },
        access: run.access ?? DEFAULT_RUN_ACCESS,
        principal: actor.subject,
      },
    },
  );
}

/** The events with the principal named on each, and the access a run it starts gets. */
function attribute(
  events: readonly DomainEvent[],
  at: { principal: Principal; access: RunAccess },
): DomainEvent[] {
  return events.map((event) =>
    event.kind === "run_started"
      ? { ...event, access: event.access ?? at.access, principal: at.principal }
      : { ...event, principal: at.principal }
  );
}

/**
 * The engine as `principal` uses it: everything its calls append names it, and the runs they
 * start get `access`. Without a principal, `deps` unchanged.
 */
export function actingAs(
  deps: EngineDeps,
  at: { principal: Principal | undefined; access?: RunAccess },
): EngineDeps {
  const { principal } = at;
  if (!principal) return deps;
  const stamp = { principal, access: at.access ?? DEFAULT_RUN_ACCESS };
  const stamped = (tx: StoreWriter): StoreWriter => ({
    ...tx,
    append: (events) => tx.append(attribute(events, stamp)),
  });
  const write = <T>(fn: (tx: StoreWriter) => Promise<T>) =>
    deps.store.write((tx) => fn(stamped(tx)));
  // every way in to a write transaction stamps its events
  const writeAttempt = deps.store.writeAttempt;
  const store: Store = {
    ...deps.store,
    write,
    ...writeAttempt && {
      writeAttempt: <T>(
        key: AttemptKey,
        fn: (tx: StoreWriter, found: AttemptOrNode) => Promise<T>,
      ) => writeAttempt(key, (tx, found) => fn(stamped(tx), found)),
    },
  };
  return { ...deps, store, principal };
}
