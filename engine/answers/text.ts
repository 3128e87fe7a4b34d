/**
 * Deterministic text renderings of every response: the text an agent reads first. Pure
 * functions of the structured data, so equal data gives equal bytes.
 * @module
 */
import { ASSESSMENT_ARTIFACT_KIND } from "../gates/assessments.ts";
import type { WaymarkError } from "../model/result.ts";
import type {
  InspectResponse,
  ListResponse,
  Recap,
  ResumeResponse,
  StepResponse,
} from "./responses.ts";

/** Renders an execution response (start, continue, checkpoint). */
export function renderStepResponse(r: StepResponse): string {
  const lines: string[] = [];
  outcomeLines(lines, r);
  pendingLines(lines, r);
  delegationLines(lines, r);
  recapLines(lines, r);
  footerLines(lines, r);
  return lines.join("\n");
}

/** What this call did: a checkpoint, a blocked acknowledgement, gaps, a new branch. */
function outcomeLines(lines: string[], r: StepResponse): void {
  if (r.checkpoint) lines.push(`Checkpoint recorded (node ${r.checkpoint.nodeId}).`, "");
  if (r.kind === "blocked" && r.blockers) {
    lines.push(
      `BLOCKED: this acknowledgement did not advance the run (attempt ${
        r.blockedAttempt?.nodeId ?? "?"
      } recorded). Fix the following, then acknowledge again with the new ackToken below:`,
    );
    for (const b of r.blockers) {
      const target = Object.entries(b.pointer).filter(([k]) => k !== "kind").map(([, v]) => v)
        .join("");
      lines.push(`- [${b.code}] (${b.pointer.kind} ${target}) ${b.message}`);
      if (b.suggestedFix) lines.push(`  Fix: ${b.suggestedFix}`);
    }
    if (r.example) lines.push(`Example: ${JSON.stringify(r.example)}`);
    lines.push("");
  }
  if (r.verification) lines.push(verificationLine(r.verification), "");
  if (r.gaps?.length) {
    lines.push("Gaps recorded (the run went on without blocking):");
    for (const g of r.gaps) lines.push(`- [${g.severity}/${g.code}] ${g.message}`);
    lines.push("");
  }
  if (r.forked) {
    lines.push(
      `This advance started a new branch; ${r.forked.existingBranches.length} other branch(es) exist from the same step:`,
    );
    for (const b of r.forked.existingBranches) {
      lines.push(
        `- ${b.nodeId} (${b.kind}, next: ${b.pendingStepId ?? "complete"})${
          b.notesPreview ? `: ${b.notesPreview}` : ""
        }`,
      );
    }
    lines.push("");
  }
}

/** What the step's verification command came to on this acknowledgement. */
function verificationLine(v: NonNullable<StepResponse["verification"]>): string {
  if (v.verdict === "not_allowed" || v.verdict === "unavailable") {
    return `Verification: \`${v.commandLine}\` was not run by waymark (${v.verdict}); see the warning.`;
  }
  const facts = [
    v.exitCode !== null ? `exit ${v.exitCode}` : null,
    v.durationMs !== null ? `${(v.durationMs / 1000).toFixed(1)} s` : null,
    v.gitHead ? `HEAD ${v.gitHead.slice(0, 12)}${v.gitDirty ? " (dirty)" : ""}` : null,
  ].filter((f) => f !== null);
  return `Verification: waymark ran \`${v.commandLine}\`: ${v.verdict}${
    facts.length ? ` (${facts.join(", ")})` : ""
  }.`;
}

/** The step to do now (or that the run is complete), and the workflow-wide guidance. */
function pendingLines(lines: string[], r: StepResponse): void {
  const w = r.workflow;
  if (r.pending) {
    const p = r.pending;
    lines.push(`# ${p.title} (\`${p.stepId}\`)`);
    if (w) lines.push(`Workflow: ${w.name} (\`${w.id}\`)`);
    if (p.agentRole) lines.push(`Role: ${p.agentRole}`);
    if (p.loop) {
      lines.push(
        `Loop \`${p.loop.loopId}\`: iteration ${p.loop.iteration} of at most ${p.loop.maxIterations}`,
      );
    }
    if (p.requireConfirmation) lines.push("Confirm with the user before acknowledging.");
    lines.push("", p.prompt, "");
  } else {
    lines.push(
      `# ${w ? `${w.name} is` : "The run is"} complete`,
      "",
      "There is no pending step.",
      "",
    );
  }
  if (r.metaGuidance?.length) {
    lines.push("## Guidance for the whole workflow", ...r.metaGuidance.map((g) => `- ${g}`), "");
  }
}

/** A parallel step's child runs (each with its task text), and a child's parent. */
function delegationLines(lines: string[], r: StepResponse): void {
  if (r.delegatedFrom) {
    const f = r.delegatedFrom;
    lines.push(
      `This run is delegation ${f.index} of step \`${f.parentStepId}\` of run ${f.parentRunId}.${
        f.settled ? " It was the last child to end: the parent's step can now be acknowledged." : ""
      }`,
      "",
    );
  }
  if (!r.delegations?.length) return;
  lines.push("## Child runs (hand each to a subagent, or drive it yourself)");
  for (const d of r.delegations) {
    lines.push(
      `- [${d.status}] ${d.index}: \`${d.workflowId}\` ${d.runId}${d.goal ? `: ${d.goal}` : ""}${
        d.modelTier ? ` (model tier ${d.modelTier})` : ""
      }`,
    );
    if (d.status === "open") lines.push(`  Task: ${d.instruction}`);
    if (d.tip) {
      lines.push(`  To drive it yourself: stateToken ${d.tip.stateToken}`);
      if (d.tip.ackToken) lines.push(`  ackToken ${d.tip.ackToken}`);
    }
  }
  lines.push("");
}

/** The recaps, and the tip's tokens when this node already has later progress. */
function recapLines(lines: string[], r: StepResponse): void {
  if (r.forked?.downstreamRecap) {
    renderRecap(lines, {
      heading: "Recap of the preferred branch below this step (most recent first)",
      recap: r.forked.downstreamRecap,
    });
  }
  if (r.recap) renderRecap(lines, { heading: "Recap (most recent first)", recap: r.recap });
  if (r.tip) {
    lines.push(
      "This step already has later progress. To carry on where that branch ended, use the tip's tokens:",
      `  stateToken: ${r.tip.stateToken}`,
    );
    if (r.tip.ackToken) lines.push(`  ackToken: ${r.tip.ackToken}`);
    lines.push("To redo this step on a new branch instead, use the tokens below.", "");
  }
}

/** The tokens for the next call, the gates to pass, the session facts, capabilities and warnings. */
function footerLines(lines: string[], r: StepResponse): void {
  const p = r.pending;
  if (p && r.ackToken) {
    lines.push(
      `Then continue_workflow with stateToken, ackToken, output.notesMarkdown${
        p.notesOptional ? " (optional)" : ""
      }${gatedInputs(p)}:`,
      `stateToken: ${r.stateToken}`,
      `ackToken: ${r.ackToken}`,
    );
    gateLines(lines, p);
  } else lines.push(`stateToken: ${r.stateToken}`);
  lines.push(`checkpointToken: ${r.checkpointToken}`);
  if (r.session) {
    lines.push(
      `Session ${r.session.sessionId} · run ${r.session.runId} · node ${r.session.nodeId}`,
    );
  }
  if (r.preferences) {
    lines.push(`Autonomy ${r.preferences.autonomy} · risk ${r.preferences.riskPolicy}`);
  }
  if (r.capabilities) {
    lines.push(
      `Capabilities: ${
        Object.entries(r.capabilities).map(([c, v]) => `${c} ${v.requested}, ${v.observed}`).join(
          "; ",
        )
      }`,
    );
  }
  for (const w of r.warnings ?? []) lines.push(`Warning [${w.code}]: ${w.message}`);
}

type PendingStep = NonNullable<StepResponse["pending"]>;

/** The other inputs the step's gates ask for, named in the call line. */
function gatedInputs(p: PendingStep): string {
  const inputs = [
    p.requiredContext || p.userDependencies ? "context" : "",
    p.outputContract || p.assessments ? "output.artifacts" : "",
  ].filter(Boolean);
  return inputs.length ? `, ${inputs.join(", ")}` : "";
}

const code = (items: readonly string[]) => items.map((i) => `\`${i}\``).join(", ");

/** The step's gates, as `pending` gives them. */
function gateLines(lines: string[], p: PendingStep): void {
  if (p.requiredContext) lines.push(`context: set ${code(p.requiredContext)}`);
  for (const d of p.userDependencies ?? []) {
    lines.push(`context from the user: \`${d.key}\` (${d.reason}): ${d.message}`);
  }
  for (const n of p.notesRules ?? []) {
    const what = n.label ? `a line \`${n.label} …\`` : n.contains ? `\`${n.contains}\`` : null;
    lines.push(`notes: ${what ? `${what}; ` : ""}${n.message}`);
  }
  if (p.outputContract) {
    const c = p.outputContract;
    lines.push(
      `artifact: ${JSON.stringify(c.example)} (${c.contractRef}${c.required ? ", required" : ""})`,
    );
  }
  for (const a of p.assessments ?? []) {
    lines.push(
      `artifact: {"kind":"${ASSESSMENT_ARTIFACT_KIND}","assessmentId":"${a.assessmentId}","dimensions":{${
        a.dimensions.map((d) =>
          `"${d.id}":"<${d.levels.join("|")}>"${d.required ? "" : " (optional)"}`
        )
          .join(",")
      }}}`,
    );
  }
  for (const f of p.followUps ?? []) {
    lines.push(
      `follow-up: rating \`${f.level}\`${
        f.assessmentId ? ` in ${f.assessmentId}` : ""
      } keeps the step pending: ${f.guidance}`,
    );
  }
}

/** The explicit truncation marker, identical wherever a recap is cut. */
export function recapMarker(recap: Recap): string {
  const omitted = recap.omittedExact ? `${recap.omitted}` : `up to ${recap.omitted}`;
  return `[recap truncated: policy ${recap.policy} kept the ${recap.entries.length} most recent entries (${recap.usedBytes} of ${recap.budgetBytes} bytes); ${omitted} earlier entries omitted]`;
}

function renderRecap(lines: string[], part: { heading: string; recap: Recap }): void {
  const { heading, recap } = part;
  if (recap.entries.length === 0 && !recap.truncated) return;
  lines.push(`## ${heading}`);
  for (const e of recap.entries) {
    lines.push(`- [${e.stepId ?? e.kind}] ${e.notesMarkdown.replaceAll("\n", "\n  ")}`);
    const v = e.verification;
    if (v) {
      lines.push(
        `  Verification: \`${v.commandLine}\` ${v.verdict}${
          v.gitHead ? ` at ${v.gitHead.slice(0, 12)}${v.gitDirty ? " (dirty)" : ""}` : ""
        }`,
      );
    }
  }
  if (recap.truncated) lines.push(recapMarker(recap));
  lines.push("");
}

/** Renders a `resume_session` result. */
export function renderResume(r: ResumeResponse): string {
  const where = r.workspace
    ? ` in ${r.workspace.workspace ?? "(no folder)"}${
      r.workspace.gitBranch ? ` on ${r.workspace.gitBranch}` : ""
    }${r.workspace.gitHeadSha ? ` @ ${r.workspace.gitHeadSha.slice(0, 12)}` : ""}`
    : "";
  const lines = [
    r.query === null
      ? `${r.candidates.length} recent run(s)${where}:`
      : `${r.candidates.length} run(s) matching ${JSON.stringify(r.query)}${where} (searched: ${
        r.searched.join(", ")
      }):`,
  ];
  if (r.candidates.length === 0) {
    lines.push(
      r.query === null
        ? "No sessions yet: start one with start_workflow."
        : "Nothing matched. Try other words from the session's notes, or call resume_session without a query to list recent runs.",
    );
  }
  for (const c of r.candidates) {
    const ws = c.workspace;
    const same = [
      ws.sameWorkspace ? "same folder" : "",
      ws.sameBranch ? "same branch" : "",
      ws.sameHead ? "same HEAD" : "",
    ].filter(Boolean).join(", ");
    lines.push(
      "",
      `${c.rank}. ${c.title} — ${c.workflowId} (${c.status}; ${c.sessionId} · ${c.runId}; found by ${c.match})`,
      `   updated ${c.updatedAt}${ws.gitBranch ? ` · branch ${ws.gitBranch}` : ""}${
        ws.workspace ? ` · ${ws.workspace}` : ""
      }${same ? ` · ${same}` : ""}`,
    );
    if (c.snippet) lines.push(`   “${c.snippet.replaceAll("\n", " ")}”`);
    if (c.corrupt) lines.push("   This session failed an integrity check: read-only.");
    lines.push(
      `   tip ${c.tip.nodeId}, next: ${c.tip.pendingStepId ?? "complete"}`,
      `   stateToken: ${c.tip.stateToken}`,
    );
  }
  if (r.candidates.length > 0) {
    lines.push(
      "",
      "To resume, call continue_workflow with only the chosen stateToken: it returns the pending step, a recap and fresh tokens, and writes nothing.",
    );
  }
  return lines.join("\n");
}

/** Renders a workflow listing. */
export function renderList(r: ListResponse): string {
  const lines = [`${r.workflows.length} workflow(s):`];
  for (const w of r.workflows) {
    lines.push(
      `- ${w.id} (${w.kind}, ${w.source}${
        w.idStatus === "legacy" ? ", legacy id" : ""
      }): ${w.name}. ${w.summary}${
        w.overlay
          ? ` [overlay: ${w.overlay.layers.join(" < ")}${
            w.overlay.baseChangedFrom ? `; its base changed since ${w.overlay.baseChangedFrom}` : ""
          }]`
          : ""
      }`,
    );
  }
  if (r.loadErrors.length > 0) {
    lines.push("", `${r.loadErrors.length} file(s) failed to load:`);
    for (const e of r.loadErrors) {
      for (const i of e.issues) lines.push(`- ${e.file}: ${i.path || "(file)"}: ${i.message}`);
    }
  }
  return lines.join("\n");
}

/** Renders a workflow inspection. */
export function renderInspect(r: InspectResponse): string {
  const w = r.workflow;
  const lines = [
    `# ${w.name} (\`${w.id}\`, v${w.version}, ${w.source})`,
    "",
    w.description,
    "",
    `${r.steps.length} step(s):`,
  ];
  if (w.capabilities) {
    lines.splice(
      4,
      0,
      `Capabilities: ${
        Object.entries(w.capabilities).map(([c, need]) => `${c} (${need})`).join(", ")
      }`,
      "",
    );
  }
  r.steps.forEach((s, i) => {
    const flags = [
      s.loopId ? `in loop ${s.loopId}` : "",
      s.outputContract ? `output ${s.outputContract}` : "",
      s.conditional ? "conditional" : "",
      s.requireConfirmation ? "needs confirmation" : "",
    ]
      .filter(Boolean).join(", ");
    lines.push(`${i + 1}. ${s.title} (\`${s.stepId}\`)${flags ? ` [${flags}]` : ""}`);
  });
  for (const warning of r.warnings) lines.push(`Warning [${warning.code}]: ${warning.message}`);
  lines.push("", `Start it with start_workflow {"workflowId": "${w.id}"}.`);
  return lines.join("\n");
}

/** Renders an error. */
export function renderError(e: WaymarkError): string {
  const retry = e.retry.kind === "retryable_after_ms"
    ? `retry after ${e.retry.afterMs} ms`
    : e.retry.kind === "retryable_immediate"
    ? "retry now"
    : "do not retry unchanged";
  return `Error ${e.code}: ${e.message} (${retry})`;
}
