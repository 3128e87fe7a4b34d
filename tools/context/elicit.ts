/**
 * Questions through the client before an acknowledgement. When an acknowledgement would be
 * blocked only on user-only dependencies (under `guided` autonomy, none a credential) and the
 * client can answer forms, the call first asks the user with a form built from the missing
 * keys. It is written once as a multi-round-trip answer (`inputRequired`): on 2026-07-28 the
 * client answers and retries the call; on 2025 revisions the SDK sends `elicitation/create`
 * itself and calls again with the answer. Accepted: the answers become context on a new
 * checkpoint node (see the engine's `user_input.ts`) and the acknowledgement goes on with them,
 * so the unblocked step comes back. Declined, cancelled or not askable: the acknowledgement goes
 * on as sent, and its blocked answer stands.
 * @module
 */
import {
  type ClientCapabilities,
  inputRequired,
  type InputRequiredResult,
  inputResponse,
  type Server,
  type ServerContext,
} from "npm:@modelcontextprotocol/server@2.4.0";
import type { ContinueInput } from "../../engine/use_cases/continue_workflow.ts";
import { pendingQuestions, recordUserInput } from "../../engine/use_cases/user_input.ts";
import type { Connection } from "../server/connection.ts";
import type { Revision } from "../revisions/mod.ts";
import { elicitationForm, USER_INPUT_KEY } from "../tasks/wire.ts";

/** Whether a client with these capabilities can answer a form elicitation. */
export function canElicit(capabilities: ClientCapabilities | undefined): boolean {
  const elicitation = capabilities?.elicitation as Record<string, unknown> | undefined;
  if (!elicitation) return false;
  // `elicitation: {}` means form support (the capability's older spelling).
  return Object.keys(elicitation).length === 0 || elicitation.form !== undefined;
}

/**
 * Before an acknowledgement: the question to ask the user first (an input-required answer),
 * or `null` to go on, having recorded the answers the retry brought.
 */
export async function askBeforeAck(
  connection: Connection,
  at: { server: Server; ctx: ServerContext; revision: Revision; input: ContinueInput },
): Promise<InputRequiredResult | null> {
  const { server, ctx, revision, input } = at;
  if (input.ackToken === undefined || !canElicit(revision.clientCapabilities(server, ctx))) {
    return null;
  }
  const ack = { ...input, ackToken: input.ackToken };
  const answer = inputResponse(ctx.mcpReq.inputResponses, USER_INPUT_KEY);
  if (answer.kind === "elicit") {
    if (answer.action !== "accept" || !answer.content) return null;
    const pending = await pendingQuestions(connection.deps, ack);
    if (pending) {
      const done = await recordUserInput(connection.deps, {
        runId: pending.runId,
        nodeId: pending.nodeId,
        answers: answer.content,
      }, { onAppend: (sessionId) => void connection.notifier.sessionChanged(sessionId) });
      if (!done.ok) await connection.notifier.health(done.error);
    }
    return null;
  }
  if (answer.kind !== "missing") return null;
  const pending = await pendingQuestions(connection.deps, ack);
  if (!pending) return null;
  const form = elicitationForm(pending.questions);
  return inputRequired({
    inputRequests: { [USER_INPUT_KEY]: inputRequired.elicit(form as never) },
  });
}
