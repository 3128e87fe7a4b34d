/**
 * Where an execution answer stands: its run (`run_…`) and node. A start or a rehydrate says so
 * in `session`; an acknowledgement's or a checkpoint's answer leaves the session out, and its
 * `stateToken` (self-contained) names the run and node.
 * @module
 */
import { runLabel } from "../../engine/model/ids.ts";
import { readTokenClaims } from "../../engine/access/tokens.ts";

/** The run label and node id of an answer (its `session`, else its state token's claims). */
export function placeOf(
  answer: { stateToken?: string; session?: { runId: string; nodeId?: string } },
): { runId: string; nodeId: string } {
  if (answer.session) return answer.session as { runId: string; nodeId: string };
  const claims = readTokenClaims(answer.stateToken ?? "");
  if (!claims) {
    throw new Error(`no session and no readable stateToken in ${JSON.stringify(answer)}`);
  }
  return { runId: runLabel(claims.runId), nodeId: claims.nodeId };
}

/**
 * An acknowledgement's answer with a `session` again, for tests that follow a run by its session
 * (the answer itself leaves the run's facts out): the session the run's start named, at the node
 * the answer's `stateToken` names.
 */
export function keepSession<T extends { stateToken: string; session?: Session }>(
  next: T,
  from: { session?: Session },
): T {
  if (next.session !== undefined || from.session === undefined) return next;
  return { ...next, session: { ...from.session, nodeId: placeOf(next).nodeId } };
}

type Session = { sessionId: string; runId: string; nodeId: string };
