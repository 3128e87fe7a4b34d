/**
 * Output contract packs: the closed set of `wr.contracts.*` ids waymark owns, each with a zod
 * schema for the artifact it asks for, the artifact `kind` it matches, and an example payload.
 * A compiled workflow carries the JSON Schema of every pack it uses, so the pinned hash changes
 * when a pack does.
 * @module
 */
import { z } from "npm:zod@4.6.7";
import { CAPABILITIES, CAPABILITY_STATUSES, GAP_SEVERITIES } from "../model/vocabulary.ts";

/** One contract pack. */
export interface ContractPack {
  /** The contract id (`wr.contracts.*`). */
  id: string;
  /** The `kind` of the artifact that fulfils it. */
  artifactKind: string;
  /** What the artifact is for. */
  summary: string;
  /** The artifact's schema. */
  schema: z.ZodType;
  /** A valid example artifact. */
  example: Record<string, unknown>;
}

const severity = z.enum(["critical", "major", "minor", "nit"]);
const level = z.enum(["high", "medium", "low"]);
const text = z.string().min(1);

/** The closed set of reasons an agent may give for a divergence from a step's instructions. */
export const DIVERGENCE_REASONS = [
  "user_instruction",
  "missing_information",
  "capability_unavailable",
  "better_approach_found",
  "out_of_scope",
  "safety_concern",
  "other",
] as const;

function pack(
  id: string,
  summary: string,
  shape: Record<string, z.ZodType>,
  example: Record<string, unknown>,
): ContractPack {
  const artifactKind = `wr.${id.slice("wr.contracts.".length)}`;
  return {
    id,
    artifactKind,
    summary,
    schema: z.object({ kind: z.literal(artifactKind), ...shape }).passthrough(),
    example: { kind: artifactKind, ...example },
  };
}

/** Every contract pack, by id. */
export const CONTRACT_PACKS: ReadonlyMap<string, ContractPack> = new Map(
  [
    pack(
      "wr.contracts.loop_control",
      "Whether the enclosing loop runs another iteration.",
      {
        decision: z.enum(["continue", "stop"]),
        loopId: z.string().min(1).optional(),
        metadata: z.record(z.string(), z.unknown()).optional(),
      },
      { decision: "stop", metadata: { reason: "the exit criteria are met" } },
    ),
    pack(
      "wr.contracts.review_verdict",
      "A typed code-review verdict with anchored findings.",
      {
        verdict: z.enum(["clean", "minor", "blocking"]),
        confidence: level,
        findings: z.array(
          z.object({
            severity,
            summary: text,
            findingCategory: z.string().optional(),
            file: z.string().optional(),
            startLine: z.number().int().optional(),
            endLine: z.number().int().optional(),
            causalLink: z.string().optional(),
            remediation: z.string().optional(),
          }).passthrough(),
        ),
        summary: text,
      },
      { verdict: "clean", confidence: "high", findings: [], summary: "No blocking issues." },
    ),
    pack(
      "wr.contracts.gate_verdict",
      "An evaluator's verdict on a gated artifact.",
      {
        verdict: z.enum(["approved", "rejected", "uncertain"]),
        confidence: level,
        rationale: z.string().min(20),
      },
      {
        verdict: "approved",
        confidence: "high",
        rationale: "The artifact meets every listed criterion (sections 1-3 cite evidence).",
      },
    ),
    pack(
      "wr.contracts.discovery_handoff",
      "The chosen direction of a discovery, for downstream agents.",
      {
        version: z.number().int().optional(),
        selectedDirection: text,
        designDocPath: z.string().optional(),
        confidenceBand: level,
        selectionTier: z.enum([
          "strong_recommendation",
          "provisional_recommendation",
          "insufficient_signal",
        ]).optional(),
        keyInvariants: z.array(z.string()).optional(),
        rejectedDirections: z.array(z.object({ direction: z.string(), reason: z.string() }))
          .optional(),
        implementationConstraints: z.array(z.string()).optional(),
        keyCodebaseLocations: z.array(z.object({ path: z.string(), relevance: z.string() }))
          .optional(),
      },
      {
        version: 1,
        selectedDirection: "Extend the existing cache layer.",
        confidenceBand: "medium",
      },
    ),
    pack(
      "wr.contracts.shaping_handoff",
      "A shaped pitch, for the coding agent.",
      {
        version: z.number().int().optional(),
        pitchPath: z.string().optional(),
        selectedShape: text,
        appetite: z.string().optional(),
        keyConstraints: z.array(z.string()).optional(),
        rabbitHoles: z.array(z.string()).optional(),
        outOfScope: z.array(z.string()).optional(),
        validationChecklist: z.array(z.string()).optional(),
      },
      { version: 1, selectedShape: "A single import endpoint with server-side validation." },
    ),
    pack(
      "wr.contracts.differentiation_handoff",
      "The promoted differentiator, shaped as a Shape Up pitch for the next phase.",
      {
        version: z.number().int().optional(),
        schemaVersion: z.string().optional(),
        generatedAt: z.string().optional(),
        evidenceFreshness: z.object({
          oldestCapturedAt: z.string(),
          newestCapturedAt: z.string(),
        }).passthrough().optional(),
        validationChecklist: z.array(z.string()).optional(),
        shapingHandoff: z.object({
          rawIdea: text,
          problem: text,
          baseline: z.string().optional(),
          appetiteHint: z.enum(["small_batch", "big_batch"]).optional(),
          noGosHints: z.array(z.string()).optional(),
          constraints: z.record(z.string(), z.unknown()).optional(),
          evidenceTopK: z.array(z.string()).max(10).optional(),
          defensibilityClaim: z.record(z.string(), z.unknown()).optional(),
        }).passthrough(),
      },
      {
        version: 1,
        shapingHandoff: {
          rawIdea: "Offline-first sync for field teams.",
          problem: "Crews lose a day's entries when the tablet has no signal.",
          appetiteHint: "small_batch",
        },
      },
    ),
    (() => {
      const base = pack(
        "wr.contracts.coding_handoff",
        "What a coding session delivered and what it leaves for review and follow-up.",
        {
          prTitle: z.string().min(1).optional(),
          summary: z.string().min(1).optional(),
          filesChanged: z.array(z.string()).optional(),
          retrospectiveObservations: z.array(z.unknown()).optional(),
          followUpTickets: z.array(z.unknown()).optional(),
          correctedAssumptions: z.array(z.unknown()).optional(),
        },
        {
          prTitle: "Add retry with backoff to the fetcher",
          retrospectiveObservations: ["The fetcher had no timeout; filed as follow-up."],
          followUpTickets: [],
        },
      );
      const fields = ["prTitle", "summary", "retrospectiveObservations", "followUpTickets"];
      return {
        ...base,
        schema: base.schema.refine(
          (a) => fields.some((f) => (a as Record<string, unknown>)[f] !== undefined),
          { message: `name at least one of ${fields.join(", ")}` },
        ),
      };
    })(),
    pack(
      "wr.contracts.capability_observation",
      "What the agent observed when it tried an optional capability.",
      {
        capability: z.enum(CAPABILITIES),
        status: z.enum(CAPABILITY_STATUSES),
        remediation: z.string().max(1024).optional(),
      },
      { capability: "web_browsing", status: "available" },
    ),
    pack(
      "wr.contracts.workflow_divergence",
      "An intentional deviation from the step's instructions.",
      {
        reason: z.enum(DIVERGENCE_REASONS),
        summary: z.string().min(1).max(1024),
        relatedStepId: z.string().optional(),
      },
      {
        reason: "user_instruction",
        summary: "Skipped the load test: the user asked not to run it.",
      },
    ),
    pack(
      "wr.contracts.gaps",
      "Inputs or checks the agent could not complete, disclosed instead of silently skipped.",
      {
        gaps: z.array(
          z.object({
            severity: z.enum(GAP_SEVERITIES),
            summary: z.string().min(1).max(512),
            contextKey: z.string().optional(),
          }).strict(),
        ).min(1).max(20),
      },
      {
        gaps: [{ severity: "major", summary: "No staging access; the migration was not dry-run." }],
      },
    ),
    pack(
      "wr.contracts.job_outputs",
      "The outputs a DeepWork job step declares, by name: a path, a list of paths, or inline text.",
      {
        outputs: z.record(z.string(), z.union([z.string(), z.array(z.string())])),
        files: z.array(
          z.object({ output: z.string(), path: z.string(), size: z.number(), sha256: z.string() }),
        ).optional(),
      },
      { outputs: { report: "reports/summary.md" } },
    ),
  ].map((p) => [p.id, p]),
);

/** The contract pack whose artifact has this kind, if any. */
export function packForArtifactKind(kind: string): ContractPack | undefined {
  for (const p of CONTRACT_PACKS.values()) if (p.artifactKind === kind) return p;
  return undefined;
}

/** The JSON Schema of a pack, as embedded (and hashed) in compiled workflows. */
export function packJsonSchema(p: ContractPack): Record<string, unknown> {
  const out = z.toJSONSchema(p.schema, { io: "input", unrepresentable: "any" }) as Record<
    string,
    unknown
  >;
  delete out.$schema;
  return out;
}
