/**
 * Notifications besides answers: logging messages for health problems, `resources/updated`
 * for subscribed sessions after an append (this connection's at once, other processes' within
 * about a second: `change_watch.ts`), and progress on an advance when the request carries a
 * progress token. Sending is best effort: a lost notification never fails a call.
 * @module
 */
import type { Server, ServerContext } from "npm:@modelcontextprotocol/server@2.4.0";
import type { StoreReader } from "../../engine/model/ports.ts";
import type { StepProgress } from "../../engine/answers/responses.ts";
import type { WaymarkError } from "../../engine/model/result.ts";
import type { VerificationWait } from "../../engine/verification/policy.ts";
import { ForeignChanges } from "./change_watch.ts";
import type { Notifier } from "../server/connection.ts";
import { SESSION_URI_PREFIX, sessionUri } from "./resources.ts";

const HEALTH_CODES: Partial<Record<WaymarkError["code"], "error" | "warning">> = {
  STORAGE_CORRUPTION_DETECTED: "error",
  STORAGE_BUSY: "warning",
  STORAGE_FULL: "error",
  STORAGE_READ_ONLY: "error",
  STORAGE_UNREACHABLE: "error",
  INVARIANT_VIOLATION: "error",
};

/** The notifier of one connection. */
export function createNotifier(
  server: Server,
  options: { log?: (line: string) => void; store: StoreReader },
): Notifier {
  const subscriptions = new Set<string>();
  const foreign = new ForeignChanges(options.store, {
    subscriptions,
    prefix: SESSION_URI_PREFIX,
    send: (uri) => server.sendResourceUpdated({ uri }),
  });
  const closed = server.onclose;
  server.onclose = () => {
    foreign.stop();
    closed?.();
  };
  return {
    subscriptions,
    subscribe(uri) {
      subscriptions.add(uri);
      foreign.update();
    },
    unsubscribe(uri) {
      subscriptions.delete(uri);
      foreign.update();
    },
    async health(error) {
      const level = HEALTH_CODES[error.code];
      if (!level) return;
      options.log?.(`health ${level}: ${error.code}: ${error.message}`);
      await server.sendLoggingMessage({
        level,
        logger: "waymark.health",
        data: { code: error.code, message: error.message, details: error.details },
      }).catch(() => {});
    },
    async sessionChanged(sessionLabel) {
      const uri = sessionUri(sessionLabel);
      if (!subscriptions.has(uri)) return;
      foreign.told(uri);
      await server.sendResourceUpdated({ uri }).catch(() => {});
    },
  };
}

/** What a call tells its client through progress notifications. */
export interface ProgressSender {
  /** How far the branch is after the call advanced it. */
  step(progress: StepProgress): Promise<void>;
  /** That the step's verification command waits for a turn (sent first, so at progress 0). */
  waiting(wait: VerificationWait): Promise<void>;
}

/** Sends progress notifications through the request, when it carries a progress token. */
export function progressSender(ctx: ServerContext): ProgressSender | undefined {
  const progressToken = ctx.mcpReq._meta?.progressToken;
  if (progressToken === undefined) return undefined;
  const send = (progress: number, message: string, total?: number) =>
    ctx.mcpReq.notify({
      method: "notifications/progress",
      params: { progressToken, progress, ...(total === undefined ? {} : { total }), message },
    }).catch(() => {});
  return {
    step: ({ done, total, stepTitle }) =>
      send(done, `Completed step ${done} of ${total}${stepTitle ? `: ${stepTitle}` : ""}`, total),
    waiting: ({ ahead, limit }) =>
      send(
        0,
        `Waiting to run the step's verification command: ${limit} already running (this server runs at most ${limit} at once) and ${ahead} waiting ahead of it; it runs when one ends, and this call answers after it.`,
      ),
  };
}
