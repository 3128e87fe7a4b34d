/**
 * A job's workflows in waymark's compiled form: each entry (a step, or a concurrent group) is
 * one compiled step whose prompt is the step's instructions (inputs, process requirements, the
 * group and a nested workflow spelled out) and whose declared outputs are an output contract,
 * so tokens, forks, blocked attempts and gaps apply to job runs as to any other. Pure: the
 * instruction files' text is handed in.
 * @module
 */
import { CONTRACT_PACKS, packJsonSchema } from "../gates/contracts.ts";
import { COMPILED_FORMAT, type CompiledStep, type CompiledWorkflow } from "../workflow/compiled.ts";
import type { JobSpec, JobStepSpec, JobWorkflowSpec } from "./job.ts";

/** The contract every job step with outputs carries. */
export const JOB_OUTPUTS_CONTRACT = "wr.contracts.job_outputs";

/** The compiled id of a job's workflow in the default profile. */
export function jobWorkflowId(job: string, workflow: string): string {
  return `${job}.${workflow}`;
}

function instructionsOf(step: JobStepSpec, files: ReadonlyMap<string, string>): string {
  return "text" in step.instructions
    ? step.instructions.text
    : files.get(step.instructions.file) ?? "";
}

function inputsText(step: JobStepSpec): string | null {
  if (step.inputs.length === 0) return null;
  const lines = step.inputs.map((i) =>
    i.fromStep
      ? `- \`${i.name}\`: the file step \`${i.fromStep}\` produced${
        i.description ? `: ${i.description}` : ""
      }`
      : `- \`${i.name}\`${i.required === false ? " (optional)" : ""}${
        i.description ? `: ${i.description}` : ""
      }`
  );
  return `## Inputs\n\n${lines.join("\n")}`;
}

function stepText(
  step: JobStepSpec,
  at: { job: string; files: ReadonlyMap<string, string> },
): string {
  const parts = [instructionsOf(step, at.files).trim()];
  if (step.subWorkflow) {
    const job = step.subWorkflow.job ?? at.job;
    parts.push(
      `This step runs the workflow \`${job}/${step.subWorkflow.workflow}\` nested in this one: call start_workflow with job_name \`${job}\` and workflow_name \`${step.subWorkflow.workflow}\`, do its steps, and when it reports workflow_complete, call finished_step for this step.`,
    );
  }
  const inputs = inputsText(step);
  if (inputs) parts.push(inputs);
  if (step.processRequirements.length > 0) {
    parts.push(
      `## Process requirements\n\n${step.processRequirements.map((r) => `- ${r}`).join("\n")}`,
    );
  }
  return parts.filter((p) => p !== "").join("\n\n");
}

/** One entry as a compiled step: the primary step's text, then the group's other steps. */
function compileEntry(
  entry: JobStepSpec[],
  at: { job: string; files: ReadonlyMap<string, string> },
): CompiledStep {
  const [primary, ...others] = entry as [JobStepSpec, ...JobStepSpec[]];
  const parts = [stepText(primary, at)];
  if (others.length > 0) {
    parts.push(
      `## Concurrent steps\n\nThis entry runs ${
        entry.map((s) => `\`${s.id}\``).join(", ")
      } concurrently: use the Task tool to run each in its own sub-agent, wait for all of them, then call finished_step once with the outputs of all of them.`,
      ...others.map((s) => `### ${s.id}: ${s.name}\n\n${stepText(s, at)}`),
    );
  }
  const sub = entry.find((s) => s.subWorkflow)?.subWorkflow;
  const outputs = entry.flatMap((s) => s.outputs);
  return {
    kind: "step",
    id: primary.id,
    title: primary.name,
    promptTemplate: parts.join("\n\n"),
    requireConfirmation: false,
    ...(outputs.length > 0
      ? {
        outputContract: {
          contractRef: JOB_OUTPUTS_CONTRACT,
          required: outputs.some((o) => o.required),
          artifactKind: CONTRACT_PACKS.get(JOB_OUTPUTS_CONTRACT)!.artifactKind,
        },
      }
      : {}),
    job: {
      stepIds: entry.map((s) => s.id),
      outputs,
      reviews: entry.flatMap((s) => s.reviews),
      inputs: entry.flatMap((s) => s.inputs),
      hooks: [...new Set(entry.flatMap((s) => s.hooks))],
      ...(sub ? { subWorkflow: { job: sub.job ?? at.job, workflow: sub.workflow } } : {}),
    },
  };
}

/** Compiles one workflow of a job. */
export function compileJobWorkflow(
  job: JobSpec,
  at: { workflow: JobWorkflowSpec; files: ReadonlyMap<string, string> },
): CompiledWorkflow {
  const { workflow, files } = at;
  const steps = workflow.entries.filter((e) => e.length > 0).map((e) =>
    compileEntry(e, { job: job.name, files })
  );
  const pack = CONTRACT_PACKS.get(JOB_OUTPUTS_CONTRACT)!;
  const usesContract = steps.some((s) => s.outputContract);
  return {
    format: COMPILED_FORMAT,
    id: jobWorkflowId(job.name, workflow.name),
    kind: "workflow",
    name: `${job.name}/${workflow.name}`,
    description: workflow.summary || job.summary,
    version: job.version,
    metaGuidance: [],
    capabilities: {},
    features: [],
    contracts: usesContract
      ? {
        [JOB_OUTPUTS_CONTRACT]: {
          artifactKind: pack.artifactKind,
          schema: packJsonSchema(pack),
          example: pack.example,
        },
      }
      : {},
    steps,
    job: {
      name: job.name,
      workflow: workflow.name,
      commonJobInfo: workflow.commonJobInfo ?? job.commonJobInfo,
      ...(workflow.postWorkflowInstructions !== undefined
        ? { postWorkflowInstructions: workflow.postWorkflowInstructions }
        : {}),
    },
  };
}
