/**
 * Each session as a resource (`waymark://sessions/ses_…`): listed newest first in pages,
 * read as JSON, subscribable, and its id completable in the resource template.
 * @module
 */
import {
  type CompleteRequestParams,
  type CompleteResult,
  type ListResourcesResult,
  type ReadResourceResult,
  ResourceNotFoundError,
  type Server,
} from "npm:@modelcontextprotocol/server@2.4.0";
import type { EngineDeps } from "../../engine/model/ports.ts";
import {
  parseSessionLabel,
  runLabel,
  SESSION_PREFIX,
  sessionLabel,
  stripLabel,
} from "../../engine/model/ids.ts";
import type { Connection } from "../server/connection.ts";

/** The URI prefix of session resources. */
export const SESSION_URI_PREFIX = "waymark://sessions/";
const SESSION_PAGE = 50;
const COMPLETIONS = 100;

/** The resource URI of a session (`ses_…`). */
export function sessionUri(label: string): string {
  return `${SESSION_URI_PREFIX}${label}`;
}

/** Serves sessions as resources, their subscriptions, and session id completions. */
export function registerResources(server: Server, connection: Connection): void {
  const { deps, notifier } = connection;
  server.setRequestHandler(
    "resources/list",
    (request) => listSessions(deps, request.params?.cursor),
  );
  server.setRequestHandler("resources/templates/list", () => ({
    resourceTemplates: [{
      uriTemplate: `${SESSION_URI_PREFIX}{sessionId}`,
      name: "session",
      title: "A waymark session",
      description: "A session's runs, their tips and latest notes, as JSON.",
      mimeType: "application/json",
    }],
  }));
  server.setRequestHandler("resources/read", (request) => readSession(deps, request.params.uri));
  server.setRequestHandler(
    "completion/complete",
    (request) => completeSessionId(deps, request.params),
  );
  server.setRequestHandler("resources/subscribe", (request) => {
    notifier.subscribe(request.params.uri);
    return {};
  });
  server.setRequestHandler("resources/unsubscribe", (request) => {
    notifier.unsubscribe(request.params.uri);
    return {};
  });
}

async function listSessions(deps: EngineDeps, cursor?: string): Promise<ListResourcesResult> {
  const offset = Number(cursor ?? 0) || 0;
  const sessions = await deps.store.listSessions({ limit: SESSION_PAGE + 1, offset });
  return {
    resources: sessions.slice(0, SESSION_PAGE).map((s) => ({
      uri: sessionUri(sessionLabel(s.sessionId)),
      name: sessionLabel(s.sessionId),
      title: s.title,
      description: `${
        s.sessionKind === "notes" ? "Notes session" : "Session"
      } updated ${s.updatedAt}`,
      mimeType: "application/json",
    })),
    ...(sessions.length > SESSION_PAGE ? { nextCursor: String(offset + SESSION_PAGE) } : {}),
  };
}

async function readSession(deps: EngineDeps, uri: string): Promise<ReadResourceResult> {
  const id = uri.startsWith(SESSION_URI_PREFIX)
    ? parseSessionLabel(uri.slice(SESSION_URI_PREFIX.length))
    : null;
  const session = id ? await deps.store.getSession(id) : null;
  if (!session) throw new ResourceNotFoundError(uri, `No waymark session at ${uri}`);
  const view = {
    ...session,
    sessionId: sessionLabel(session.sessionId),
    runs: session.runs.map((r) => ({ ...r, runId: runLabel(r.runId) })),
  };
  return {
    contents: [{ uri, mimeType: "application/json", text: JSON.stringify(view, null, 2) }],
  };
}

/** Session ids for the resource template's `sessionId`, from the most recent sessions. */
async function completeSessionId(
  deps: EngineDeps,
  params: CompleteRequestParams,
): Promise<CompleteResult> {
  const { ref, argument } = params;
  if (ref.type !== "ref/resource" || argument.name !== "sessionId") {
    return { completion: { values: [], hasMore: false } };
  }
  const prefix = stripLabel(argument.value, SESSION_PREFIX);
  const recent = await deps.store.listSessions({ limit: COMPLETIONS, offset: 0 });
  const values = recent.filter((s) => s.sessionId.startsWith(prefix))
    .map((s) => sessionLabel(s.sessionId)).slice(0, COMPLETIONS);
  return { completion: { values, hasMore: false } };
}
