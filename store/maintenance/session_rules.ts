/**
 * Doctor's `session_rules` check: every session whose log verifies, against the rules every
 * session built over MCP satisfies (`engine/model/session_rules.ts`, the same function import uses),
 * so a session that entered by another way (an old import, an edited database) is reported.
 * @module
 */
import type { Kysely } from "npm:kysely@0.29.9";
import { sessionLabel } from "../../engine/model/ids.ts";
import { type RuleEvent, sessionRuleViolation } from "../../engine/model/session_rules.ts";
import type { CompiledWorkflow } from "../../engine/workflow/compiled.ts";
import { decodeLogRow, sessionLog } from "../sql/log.ts";
import type { Database } from "../sql/database.ts";
import { type DoctorFinding, finding, listSessions } from "./doctor_checks.ts";

/** The compiled snapshots a session's runs pin, by hash (unreadable ones left out). */
async function pinned(db: Kysely<Database>, sessionId: string) {
  const rows = await db.selectFrom("workflow_snapshots").select(["workflow_hash", "compiled"])
    .where(
      "workflow_hash",
      "in",
      db.selectFrom("runs").select("workflow_hash").where("session_id", "=", sessionId),
    ).execute();
  const out = new Map<string, CompiledWorkflow>();
  for (const row of rows) {
    try {
      out.set(row.workflow_hash, JSON.parse(row.compiled) as CompiledWorkflow);
    } catch { /* the snapshots check reports it */ }
  }
  return out;
}

/** The first rule a session breaks, in words, or `null` (a log that fails decoding is skipped). */
async function violation(db: Kysely<Database>, sessionId: string, now: string) {
  const events: RuleEvent[] = [];
  for await (const row of sessionLog(db, sessionId)) {
    const decoded = decodeLogRow(row, sessionId);
    if (!decoded.ok) return null; // the event_log check reports it
    const payload = decoded.event as unknown as Record<string, unknown>;
    events.push({ n: events.length + 1, kind: row.kind, at: row.at, payload });
  }
  return sessionRuleViolation(events, await pinned(db, sessionId), { now });
}

/** Every given session against the session rules; one finding naming those that break one. */
export async function sessionRules(
  db: Kysely<Database>,
  options: { sessions: readonly string[]; now: string },
): Promise<DoctorFinding> {
  const bad: { sessionId: string; rule: string; message: string }[] = [];
  for (const id of options.sessions) {
    const broken = await violation(db, id, options.now);
    if (broken) {
      bad.push({ sessionId: sessionLabel(id), rule: broken.rule, message: broken.message });
    }
  }
  return finding(
    "session_rules",
    bad.length === 0 ? null : {
      message: `${bad.length} session(s) break a rule every session built over MCP keeps: ${
        listSessions(bad.map((b) => b.sessionId.slice(4)))
      } (${bad[0]!.message})`,
      fix:
        "They did not come from an MCP client (an import from an older waymark, or an edited database): export what you need from them, then remove them or restore them from a backup.",
      details: { sessions: bad },
    },
    `${options.sessions.length} session(s) keep the session rules`,
  );
}
