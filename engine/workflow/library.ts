/**
 * waymark's closed libraries that workflows reference by id: prompt snippets (`wr.refs.*`),
 * compiler features (`wr.features.*`) and built-in templates (`wr.templates.*`). Their text is
 * copied into the compiled workflow, so it is inside the pinned hash.
 * @module
 */
import {
  CAPABILITIES,
  type Capability,
  CAPABILITY_STATUSES,
  GAP_SEVERITIES,
} from "../model/vocabulary.ts";
import { DIVERGENCE_REASONS } from "../gates/contracts.ts";

/** A closed set as prompts spell it: `"a" | "b"`. */
function oneOf(list: readonly string[]): string {
  return list.map((v) => JSON.stringify(v)).join(" | ");
}

/** Reusable prompt snippets, referenced from promptBlocks as `{kind: "ref", refId}`. */
export const SNIPPETS: ReadonlyMap<string, string> = new Map([
  [
    "wr.refs.notes_first_durability",
    "Write what matters into output.notesMarkdown (and context keys the workflow names) as you go: chat history can be rewound or lost, the notes cannot.",
  ],
  [
    "wr.refs.synthesis_under_disagreement",
    "When sources or reviewers disagree, do not average them: name the disagreement, weigh the evidence on each side, state the position you take and why, and record what would change it.",
  ],
  [
    "wr.refs.parallelize_cognition_serialize_synthesis",
    "Parallelize independent thinking (subagents or separate passes), but synthesize serially in one place: the main agent owns the final judgement and reconciles every delegated result.",
  ],
  [
    "wr.refs.adversarial_challenge_rules",
    "Challenge the current conclusion in earnest: look for the strongest counter-evidence, the simplest alternative explanation and the case where the conclusion fails. A challenge that finds nothing must say what it tried.",
  ],
  [
    "wr.refs.capability_observation",
    `Report what you observed about an optional capability as an artifact: {"kind": "wr.capability_observation", "capability": ${
      oneOf(CAPABILITIES)
    }, "status": ${oneOf(CAPABILITY_STATUSES)}}.`,
  ],
  [
    "wr.refs.divergence_reporting",
    `If you deliberately deviate from these instructions, say so with an artifact: {"kind": "wr.workflow_divergence", "reason": ${
      oneOf(DIVERGENCE_REASONS)
    }, "summary": "..."}.`,
  ],
  [
    "wr.refs.gaps_disclosure",
    `Disclose anything you could not do or verify instead of skipping it silently: {"kind": "wr.gaps", "gaps": [{"severity": ${
      oneOf(GAP_SEVERITIES)
    }, "summary": "..."}]}.`,
  ],
]);

/** A compiler feature: guidance added to the workflow and to each structured step. */
export interface Feature {
  /** Added to the workflow's metaGuidance. */
  metaGuidance: string;
  /** Appended as a constraint to every step authored with promptBlocks. */
  stepConstraint?: string;
  /** A capability the feature marks as preferred when the workflow does not declare it. */
  prefers?: Capability;
}

/** The closed set of compiler features. */
export const FEATURES: ReadonlyMap<string, Feature> = new Map([
  [
    "wr.features.subagent_guidance",
    {
      metaGuidance:
        "DELEGATION: where a step suggests subagents or parallel work, use them if your environment supports delegation; otherwise do the same work yourself, sequentially, and say so in your notes.",
      stepConstraint:
        "Delegated output is evidence, not a verdict: synthesize it yourself before acting on it.",
      prefers: "delegation",
    },
  ],
  [
    "wr.features.capabilities",
    {
      metaGuidance:
        'CAPABILITIES: when you try an optional capability (delegation, web browsing), report what happened with a {"kind": "wr.capability_observation", "capability": ..., "status": "available" | "unavailable"} artifact, so later steps and resumed sessions know.',
    },
  ],
  [
    "wr.features.divergence_markers",
    {
      metaGuidance:
        'DIVERGENCE: when you deliberately deviate from a step, report it with a {"kind": "wr.workflow_divergence", "reason": ..., "summary": ...} artifact.',
    },
  ],
]);

/** Built-in templates that are not routines. */
export const CAPABILITY_PROBE_TEMPLATE = "wr.templates.capability_probe";

/** The template id that expands the routine `<namespace>.routine-<name>`. */
export function routineTemplateId(routineId: string): string | null {
  const m = /^([a-z][a-z0-9_-]*)\.routine-(.+)$/.exec(routineId);
  return m ? `${m[1]}.templates.routine.${m[2]}` : null;
}

/** The prompt of a capability probe step. */
export function probePrompt(capability: Capability): string {
  const attempt = capability === "web_browsing"
    ? "Try one minimal web action with your tools: fetch a short public page (for example https://example.com) or run one web search."
    : "Try one minimal delegation with your tools: start a subagent (or task) that answers a trivial question and returns.";
  return [
    `This workflow needs the \`${capability}\` capability. Check it now, before any real work.`,
    "",
    attempt,
    "",
    'Then acknowledge this step with an artifact in output.artifacts: {"kind": "wr.capability_observation", "capability": "' +
    capability +
    `", "status": ${
      oneOf(CAPABILITY_STATUSES)
    }, "remediation": "optional: what would make it available"}.`,
    "Report only what you observed; do not guess.",
  ].join("\n");
}
