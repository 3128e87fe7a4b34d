/**
 * A session as a Markdown document: its runs, each run's branches (the preferred one first), and
 * every step's notes and artifacts. Agents' notes are quoted (`> `) so their headings cannot
 * break the document's structure.
 * @module
 */
import { runLabel, sessionLabel } from "../engine/model/ids.ts";
import { layoutRun } from "./layout.ts";
import { labelFor, loadPinned, type Pinned } from "./model.ts";
import {
  type ExportNode,
  getExportNodes,
  getSession,
  type RunSummary,
  type ViewerDb,
} from "./queries.ts";

function quote(text: string): string {
  return text.split("\n").map((line) => line ? `> ${line}` : ">").join("\n");
}

function inlineCode(text: string): string {
  const clean = text.replace(/[\r\n]+/g, " ");
  const fence = clean.includes("`") ? "``" : "`";
  return `${fence}${fence === "``" ? " " : ""}${clean}${fence === "``" ? " " : ""}${fence}`;
}

function plain(text: string): string {
  // a title on one line, with Markdown's inline syntax characters escaped
  return text.replace(/[\r\n]+/g, " ").replace(/([\\`*_{}[\]()#+!|<>~])/g, "\\$1");
}

/** One node: heading, marks, quoted notes, artifacts, and the pending step at a branch's end. */
function nodeMarkdown(
  node: ExportNode,
  run: RunSummary,
  options: { pinned: Pinned | null; branchEnd: boolean },
): string[] {
  const { pinned } = options;
  const id = node.nodeId;
  const label = labelFor(node, pinned);
  const marks = [
    node.kind !== "step" ? node.kind.replace("_", " ") : null,
    id === run.lastNodeId ? "preferred tip" : null,
    node.isComplete ? "run complete" : null,
  ].filter(Boolean);
  const out = [
    `#### ${plain(label.title)}${label.stepId ? ` ${inlineCode(label.stepId)}` : ""}`,
    "",
    `Node ${inlineCode(id)} · ${node.createdAt}${marks.length ? ` · ${marks.join(", ")}` : ""}`,
    "",
  ];
  if (node.notesMarkdown) out.push(quote(node.notesMarkdown), "");
  if (node.artifacts.length > 0) {
    out.push(
      "Artifacts:",
      "",
      "```json",
      JSON.stringify(node.artifacts, null, 2).replace(/```/g, "`\u200b``"),
      "```",
      "",
    );
  }
  if (!node.isComplete && node.pendingStepId && options.branchEnd) {
    const title = pinned?.steps.get(node.pendingStepId)?.title ?? node.pendingStepId;
    out.push(`Pending: ${plain(title)} ${inlineCode(node.pendingStepId)}`, "");
  }
  return out;
}

/** One run (the `index`th): its facts, then each branch, the preferred one first. */
async function runMarkdown(db: ViewerDb, run: RunSummary, index: number): Promise<string[]> {
  const [{ nodes, truncated }, pinned] = await Promise.all([
    getExportNodes(db, run.runId),
    loadPinned(db, run.workflowHash),
  ]);
  const out = [`## Run ${index + 1}: ${plain(run.title)}`, ""];
  out.push(`- Run: ${inlineCode(runLabel(run.runId))}`);
  out.push(`- Workflow: ${inlineCode(run.workflowId)} (pinned ${inlineCode(run.workflowHash)})`);
  if (run.goal) out.push(`- Goal: ${plain(run.goal)}`);
  out.push(`- Status: ${run.status}`);
  out.push(`- Nodes: ${run.nodeCount}; branches: ${run.branchCount}`);
  if (truncated) out.push(`- Only the first ${nodes.length} nodes are exported.`);
  out.push("");
  const byId = new Map(nodes.map((n) => [n.nodeId, n]));
  const layout = layoutRun(
    nodes.map((n) => ({ id: n.nodeId, parentId: n.parentId })),
    run.lastNodeId,
  );
  for (const branch of layout.branches) {
    const from = branch.forkFromId ? byId.get(branch.forkFromId) : undefined;
    const heading = branch.preferred
      ? "### Preferred branch"
      : `### Branch ${branch.index + 1}${
        from
          ? `, forked from ${inlineCode(from.nodeId)} (${plain(labelFor(from, pinned).title)})`
          : ""
      }`;
    out.push(heading, "");
    const last = branch.nodeIds[branch.nodeIds.length - 1];
    for (const id of branch.nodeIds) {
      out.push(...nodeMarkdown(byId.get(id)!, run, { pinned, branchEnd: id === last }));
    }
  }
  return out;
}

/** The Markdown export of a session, or `null` when there is no such session. */
export async function exportSessionMarkdown(
  db: ViewerDb,
  sessionId: string,
  now: Date = new Date(),
): Promise<string | null> {
  const detail = await getSession(db, sessionId);
  if (!detail) return null;
  const { session, runs } = detail;
  const out: string[] = [];
  out.push(`# ${plain(session.title)}`, "");
  out.push(`- Session: ${inlineCode(sessionLabel(session.sessionId))}`);
  out.push(`- Status: ${session.status}`);
  out.push(`- Created: ${session.createdAt}`);
  out.push(`- Updated: ${session.updatedAt}`);
  out.push(`- Events: ${session.eventCount}`);
  out.push(`- Runs: ${runs.length}${detail.runsTruncated ? " (more not exported)" : ""}`);
  out.push(`- Exported: ${now.toISOString()} by the waymark viewer`, "");
  for (const [i, run] of runs.entries()) out.push(...await runMarkdown(db, run, i));
  return `${out.join("\n").replace(/\n{3,}/g, "\n\n").trimEnd()}\n`;
}
