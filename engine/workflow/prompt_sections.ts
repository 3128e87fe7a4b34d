/**
 * The sections the compiler appends to a step's prompt (guidance, functions, needs from the
 * user, output contract; the gates' sections are in `gates.ts`) and the text of delegations and routine calls. Part of
 * the compiled form, so every byte here is part of the workflow hash.
 * @module
 */
import { CONTRACT_PACKS } from "../gates/contracts.ts";
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
  "Run these delegations. Each one waymark opened as a child run is listed in this response's `delegations`, with a token and a ready-made instruction: hand each to a subagent if your environment supports delegation; otherwise drive each child yourself, one after another, with its tokens. Do any delegation not listed there yourself. Acknowledge this step once every child run is complete (or aborted with a reason); the next step gives you their results to synthesize.";

/** The synthesis step's prompt when the workflow gives none. */
export const SYNTHESIS_PROMPT =
  "Synthesize the results of the delegations of the previous step: compare what each child run found, resolve contradictions, say what is missing, and record one consolidated result in your notes.";

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
