/** @jsxImportSource npm:hono@4.13.19/jsx */
/**
 * The session page's "Session notes": every checkpoint's notes, newest first.
 * @module
 */
import type { FC } from "npm:hono@4.13.19/jsx";
import { paths } from "../model.ts";
import type { SessionNote } from "../queries.ts";
import { fmtTime } from "./display_text.ts";
import { Markdown } from "./notes.tsx";
import type { Html } from "./shell.tsx";

/** Props of {@linkcode SessionNotes}. */
export type SessionNotesProps = { notes: SessionNote[]; sessionId: string };

/** The session notes panel. */
export const SessionNotes: FC<SessionNotesProps> = (
  { notes, sessionId }: SessionNotesProps,
): Html => (
  <section class="panel" id="session-notes" data-live="1">
    <h2>
      Session notes <span class="muted small">checkpoint notes, newest first</span>
    </h2>
    {notes.length === 0
      ? <p class="muted small">No checkpoint notes in this session yet.</p>
      : (
        <ul class="note-list">
          {notes.map((n) => (
            <li>
              <div class="small">
                <a href={`${paths.node(sessionId, n.runId, n.nodeId)}#node`} data-nav="1">
                  {fmtTime(n.createdAt)}
                </a>
              </div>
              <Markdown text={n.notesMarkdown} />
            </li>
          ))}
        </ul>
      )}
  </section>
);
