/**
 * The sections the compiler appends to a step's prompt (guidance, functions, self-assessment,
 * needs from the user, output contract) and the text of delegations and routine calls. Part of
 * the compiled form, so every byte here is part of the workflow hash.
 * @module
 */
import { CONTRACT_PACKS } from "../contracts.ts";
import type { UserDependency, WorkflowFile, WorkflowStep } from "./schema.ts";

/** The ids of a listing, sorted and quoted, for messages that say what exists. */
export function knownIds(ids: Iterable<string>): string {
  return [...ids].sort().map((id) => `\`${id}\``).join(", ");
}

/** The step's own guidance, as a list. */
export function guidanceSection(guidance: readonly string[] | undefined): string {
  return guidance?.length ? `\n\n## Guidance\n${guidance.map((g) => `- ${g}`).join("\n")}` : "";
}

/** The functions a step references, each with its definition from the workflow. */
export function functionSection(file: WorkflowFile, refs: readonly string[] | undefined): string {
  if (!refs?.length) return "";
  const defs = new Map((file.functionDefinitions ?? []).map((d) => [d.name, d.definition]));
  const lines = refs.map((r) => {
    const name = r.replace(/\(\)$/, "");
    return `- \`${r}\`: ${defs.get(name) ?? "(no definition in this workflow)"}`;
  });
  return `\n\n## Functions\n${lines.join("\n")}`;
}

interface AssessmentDef {
  id: string;
  purpose?: string;
  dimensions?: { id: string; purpose?: string; levels?: string[] }[];
}

/** A rendered self-assessment section, and the references it could not resolve. */
export interface AssessmentSection {
  /** The section text (empty when the step references no assessment). */
  text: string;
  /** References to assessments the workflow does not define (compile errors). */
  unknown: unknown[];
  /** The workflow's assessment ids, for the error message. */
  known: string[];
}

function assessmentLines(def: AssessmentDef): string[] {
  return [
    `- \`${def.id}\`${def.purpose ? `: ${def.purpose}` : ""}`,
    ...(def.dimensions ?? []).map((d) =>
      `  - \`${d.id}\` (${(d.levels ?? []).join(" | ")})${d.purpose ? `: ${d.purpose}` : ""}`
    ),
  ];
}

function consequenceLines(step: WorkflowStep): string[] {
  const consequences = Array.isArray(step.assessmentConsequences)
    ? step.assessmentConsequences as {
      when?: { anyEqualsLevel?: string; forAssessment?: string };
      effect?: { guidance?: string };
    }[]
    : [];
  return consequences.filter((c) => c?.when?.anyEqualsLevel && c.effect?.guidance).map((c) =>
    `If any dimension${c.when!.forAssessment ? ` of \`${c.when!.forAssessment}\`` : ""} is \`${
      c.when!.anyEqualsLevel
    }\`, follow up before acknowledging: ${c.effect!.guidance}`
  );
}

/**
 * WorkRail self-assessments, rendered into the prompt (guidance for the agent; waymark does not
 * enforce their consequences).
 */
export function assessmentSection(file: WorkflowFile, step: WorkflowStep): AssessmentSection {
  const refs = step.assessmentRefs;
  if (!Array.isArray(refs) || refs.length === 0) return { text: "", unknown: [], known: [] };
  const defs = Array.isArray(file.assessments)
    ? (file.assessments as AssessmentDef[]).filter((a) => a && typeof a.id === "string")
    : [];
  const byId = new Map(defs.map((a) => [a.id, a]));
  const lines = [
    "## Self-assessment",
    "Before acknowledging, rate each dimension and give the ratings in output.notesMarkdown:",
  ];
  const unknown: unknown[] = [];
  for (const ref of refs) {
    const def = typeof ref === "string" ? byId.get(ref) : undefined;
    if (def) lines.push(...assessmentLines(def));
    else unknown.push(ref);
  }
  lines.push(...consequenceLines(step));
  return { text: `\n\n${lines.join("\n")}`, unknown, known: [...byId.keys()] };
}

/** The output contract a step must meet, with an example artifact. */
export function contractSection(
  c: { contractRef: string; required: boolean } | undefined,
): string {
  if (!c) return "";
  const p = CONTRACT_PACKS.get(c.contractRef)!;
  return `\n\n## Output contract\n\`${c.contractRef}\`${
    c.required ? " (required)" : " (optional)"
  }: ${p.summary} Put one artifact of kind \`${p.artifactKind}\` in output.artifacts, for example:\n\`\`\`json\n${
    JSON.stringify(p.example)
  }\n\`\`\``;
}

/** The context keys only the user can supply. */
export function dependencySection(deps: readonly UserDependency[] | undefined): string {
  if (!deps?.length) return "";
  return `\n\n## Needs from the user\n${
    deps.map((d) =>
      `- \`${d.contextKey}\` (${d.reason}): ${d.message} Set it in \`context\` when acknowledging.`
    ).join("\n")
  }`;
}

/** How a parallel step's prompt opens, before its delegations. */
export const DELEGATION_PREAMBLE =
  "Run these delegations. Use parallel subagents if your environment supports delegation; otherwise run each one yourself, one after another. Then synthesize their results yourself.";

function argText(args: Record<string, unknown>): string[] {
  return Object.entries(args).map(([k, v]) =>
    `${k} = ${typeof v === "string" ? v : JSON.stringify(v)}`
  );
}

/** One delegation of a parallel step, as a list item. */
export function delegationLine(
  d: NonNullable<WorkflowStep["parallelDelegations"]>[number],
): string {
  const args = argText(d.args ?? {});
  const mapping = Object.entries(d.contextMapping ?? {}).map(([k, v]) => `${v} ← ${k}`);
  const extras = [
    d.goal ? `goal: ${d.goal}` : "",
    args.length ? `args: ${args.join(", ")}` : "",
    mapping.length ? `context: ${mapping.join(", ")}` : "",
    d.modelTier ? `model tier: ${d.modelTier}` : "",
  ].filter(Boolean);
  return `- \`${d.workflowId}\`${extras.length ? ` (${extras.join("; ")})` : ""}`;
}

/** What the first step of an expanded routine says about the call, before its own prompt. */
export function routineHeader(routine: WorkflowFile, args: Record<string, unknown>): string {
  const text = argText(args);
  return [
    `This step runs the routine \`${routine.id}\` (${routine.name})${
      text.length ? ` with ${text.join(", ")}` : ""
    }.`,
    ...(routine.metaGuidance?.length
      ? ["", "## Routine guidance", ...routine.metaGuidance.map((g) => `- ${g}`)]
      : []),
  ].join("\n") + "\n\n";
}

/** A routine's text with the call's `{{arg}}` placeholders filled (others left for run time). */
export function substituteArgs(text: string, args: Record<string, unknown>): string {
  return text.replace(/\{\{\s*([A-Za-z_][A-Za-z0-9_]*)\s*\}\}/g, (whole, name: string) => {
    if (!(name in args)) return whole;
    const v = args[name];
    return typeof v === "string" ? v : JSON.stringify(v);
  });
}
