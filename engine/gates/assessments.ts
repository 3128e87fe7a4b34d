/**
 * Assessments on acknowledgement: the `wr.assessment` artifacts a step asks for are checked
 * against the declared dimensions and levels, the valid ones recorded, and the step's follow-ups
 * evaluated on what was recorded. Pure.
 *
 * Codes: a missing assessment or required dimension is `MISSING_REQUIRED_OUTPUT`, a malformed or
 * unknown one `INVALID_REQUIRED_OUTPUT` (WorkRail's codes). Problems of one dimension point at
 * it (`assessment_dimension`); problems of a whole artifact point at the pseudo contract
 * `wr.contracts.assessment` (`output_contract`), as WorkRail's do.
 * @module
 */
import type { Artifact } from "../model/events.ts";
import type { Blocker } from "../answers/responses.ts";
import type { CompiledAssessment, CompiledStep } from "../workflow/compiled.ts";

/** The contract a whole assessment artifact is checked against (a pseudo contract). */
export const ASSESSMENT_CONTRACT_REF = "wr.contracts.assessment";
/** The artifact kind of an assessment. */
export const ASSESSMENT_ARTIFACT_KIND = "wr.assessment";

/** An assessment that passed its checks: its levels by dimension, in declared order. */
export interface RecordedAssessment {
  /** Assessment id. */
  assessmentId: string;
  /** Dimension id → level. */
  dimensions: Record<string, string>;
}

/** What the assessments of an acknowledgement came to. */
export interface AssessmentReview {
  /** Missing, malformed or unknown ratings, then the follow-ups that fired. */
  problems: Blocker[];
  /** The assessments that passed their checks, in `assessmentRefs` order. */
  recorded: RecordedAssessment[];
}

const quoted = (ids: readonly string[]) => ids.map((id) => `\`${id}\``).join(", ");
const whole = { kind: "output_contract", contractRef: ASSESSMENT_CONTRACT_REF } as const;
const at = (assessmentId: string, dimensionId: string) =>
  ({ kind: "assessment_dimension", assessmentId, dimensionId }) as const;

/** An example artifact for an assessment, each level a placeholder naming the choices. */
export function assessmentExample(def: CompiledAssessment): Record<string, unknown> {
  return {
    kind: ASSESSMENT_ARTIFACT_KIND,
    assessmentId: def.id,
    dimensions: Object.fromEntries(
      def.dimensions.map((d) => [d.id, `<one of: ${d.levels.join(", ")}>`]),
    ),
  };
}

function fixFor(def: CompiledAssessment): string {
  return `Send it in output.artifacts and acknowledge again with the new ackToken, for example ${
    JSON.stringify(assessmentExample(def))
  }`;
}

/** A submitted level: a string, or WorkRail's `{level, rationale?}`. */
function levelOf(value: unknown): string | null {
  if (typeof value === "string") return value;
  if (
    value && typeof value === "object" && typeof (value as { level?: unknown }).level === "string"
  ) {
    return (value as { level: string }).level;
  }
  return null;
}

/** The dimensions of a well-formed assessment artifact, or why it is malformed. */
function dimensionsOf(artifact: Artifact): Record<string, unknown> | string {
  const dims = artifact.dimensions;
  if (!dims || typeof dims !== "object" || Array.isArray(dims)) {
    return "it needs `dimensions`, an object of dimension id → level";
  }
  if (artifact.assessmentId !== undefined && typeof artifact.assessmentId !== "string") {
    return "`assessmentId` must be a string";
  }
  return dims as Record<string, unknown>;
}

/** Checks one submitted artifact against its definition; records it when nothing is wrong. */
function checkOne(
  def: CompiledAssessment,
  dims: Record<string, unknown>,
): { problems: Blocker[]; recorded?: RecordedAssessment } {
  const problems: Blocker[] = [];
  const known = def.dimensions.map((d) => d.id);
  for (const id of Object.keys(dims)) {
    if (known.includes(id)) continue;
    problems.push({
      code: "INVALID_REQUIRED_OUTPUT",
      pointer: at(def.id, id),
      message: `Assessment \`${def.id}\` has no dimension \`${id}\`; its dimensions: ${
        quoted(known)
      }.`,
      suggestedFix: `Rate only its dimensions. ${fixFor(def)}`,
    });
  }
  const levels: Record<string, string> = {};
  for (const d of def.dimensions) {
    const value = dims[d.id];
    const level = levelOf(value);
    if (value === undefined) {
      if (!d.required) continue;
      problems.push({
        code: "MISSING_REQUIRED_OUTPUT",
        pointer: at(def.id, d.id),
        message: `Assessment \`${def.id}\` needs a level for \`${d.id}\`: one of ${
          quoted(d.levels)
        }.`,
        suggestedFix: fixFor(def),
      });
    } else if (level === null || !d.levels.includes(level)) {
      problems.push({
        code: "INVALID_REQUIRED_OUTPUT",
        pointer: at(def.id, d.id),
        message: `${
          level === null ? "The rating" : `\`${level}\``
        } is not a level of \`${def.id}\`.\`${d.id}\`; its levels: ${quoted(d.levels)}.`,
        suggestedFix: fixFor(def),
      });
    } else levels[d.id] = level;
  }
  return problems.length
    ? { problems }
    : { problems, recorded: { assessmentId: def.id, dimensions: levels } };
}

/** Problems with artifacts that name no assessment this step asks for, or are malformed. */
function strayProblems(
  step: CompiledStep,
  submitted: readonly Artifact[],
  defs: readonly CompiledAssessment[],
): Blocker[] {
  const ids = defs.map((d) => d.id);
  const problems: Blocker[] = [];
  for (const artifact of submitted) {
    const shape = dimensionsOf(artifact);
    const id = artifact.assessmentId;
    let problem: string | null = null;
    if (typeof shape === "string") problem = `is malformed: ${shape}`;
    else if (typeof id === "string" && !ids.includes(id)) {
      problem = `names \`${id}\`, which step \`${step.id}\` does not ask for`;
    } else if (id === undefined && ids.length > 1) problem = "needs `assessmentId`";
    if (problem === null) continue;
    problems.push({
      code: "INVALID_REQUIRED_OUTPUT",
      pointer: whole,
      message: `A \`${ASSESSMENT_ARTIFACT_KIND}\` artifact ${problem}; this step asks for: ${
        quoted(ids)
      }.`,
      suggestedFix: fixFor(defs[0]!),
    });
  }
  return problems;
}

/** Reviews the assessments of an acknowledgement of `step` (none asked: nothing to review). */
export function reviewAssessments(
  step: CompiledStep,
  artifacts: readonly Artifact[],
): AssessmentReview {
  const defs = step.assessments ?? [];
  if (defs.length === 0) return { problems: [], recorded: [] };
  const submitted = artifacts.filter((a) => a.kind === ASSESSMENT_ARTIFACT_KIND);
  const problems = strayProblems(step, submitted, defs);
  const recorded: RecordedAssessment[] = [];
  for (const def of defs) {
    const artifact = submitted.find((a) =>
      a.assessmentId === def.id || (a.assessmentId === undefined && defs.length === 1)
    );
    const dims = artifact ? dimensionsOf(artifact) : null;
    if (!artifact) {
      problems.push({
        code: "MISSING_REQUIRED_OUTPUT",
        pointer: whole,
        message:
          `Step \`${step.id}\` requires the assessment \`${def.id}\` (a \`${ASSESSMENT_ARTIFACT_KIND}\` artifact in output.artifacts); none was sent.`,
        suggestedFix: fixFor(def),
      });
    } else if (typeof dims !== "string" && dims !== null) {
      const checked = checkOne(def, dims);
      problems.push(...checked.problems);
      if (checked.recorded) recorded.push(checked.recorded);
    }
  }
  return { problems: [...problems, ...followUps(step, recorded)], recorded };
}

/**
 * The follow-ups that fire on what was recorded, in declaration order, each on its own: a
 * consequence fires when any dimension (of its assessment, with `forAssessment`) has its level.
 * The blocker points at the first such dimension; its suggested fix is the author's guidance.
 */
export function followUps(step: CompiledStep, recorded: readonly RecordedAssessment[]): Blocker[] {
  const out: Blocker[] = [];
  for (const c of step.consequences ?? []) {
    const hits = recorded
      .filter((r) => c.forAssessment === undefined || r.assessmentId === c.forAssessment)
      .flatMap((r) =>
        Object.entries(r.dimensions).filter(([, level]) => level === c.anyEqualsLevel)
          .map(([dim]) => ({ assessmentId: r.assessmentId, dim }))
      );
    if (hits.length === 0) continue;
    out.push({
      code: "ASSESSMENT_FOLLOWUP_REQUIRED",
      pointer: at(hits[0]!.assessmentId, hits[0]!.dim),
      message: `Follow-up required: ${
        hits.map((h) => `${h.assessmentId}.${h.dim}`).join(", ")
      } = \`${c.anyEqualsLevel}\`. The step stays pending: do what the suggested fix says, then acknowledge again with a new assessment.`,
      suggestedFix: c.guidance,
    });
  }
  return out;
}
