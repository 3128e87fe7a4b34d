/**
 * `job.yml` text to a {@linkcode JobSpec}: YAML (the `yaml` package, loaded on first use), then one
 * zod schema per format. The step-list format has root `steps` and a list of `workflows`; the
 * workflow-map format has `step_arguments` and a map of `workflows`. Keys these schemas do not
 * name are ignored, so job files with extra fields still load.
 * @module
 */
import { z } from "npm:zod@4.6.7";
import { formatPath } from "../common/issue_path.ts";
import { JOB_OUTPUT_TYPES } from "../model/vocabulary.ts";
import type { JobInputSpec, JobOutputSpec, JobReviewSpec, JobSpec, JobStepSpec } from "./job.ts";
import { yamlParser } from "./yaml.ts";

const NAME = /^[A-Za-z0-9][A-Za-z0-9_-]*$/;
const name = (what: string) =>
  z.string().regex(
    NAME,
    `${what} must be letters, digits, \`_\` or \`-\` (and start with one of the first two)`,
  );
const text = z.string();
const jsonSchema = z.record(z.string(), z.unknown());
const version = z.union([z.string(), z.number()]).transform(String);

const outputSpec = z.object({
  type: z.enum(JOB_OUTPUT_TYPES),
  description: text.default(""),
  required: z.boolean().default(true),
  json_schema: jsonSchema.optional(),
});

const reviewSpec = z.object({
  run_each: z.string().min(1),
  quality_criteria: z.record(z.string(), text).default({}),
  additional_review_guidance: text.optional(),
});

const inputSpec = z.union([
  z.object({ file: z.string().min(1), from_step: z.string().min(1), description: text.optional() }),
  z.object({ name: z.string().min(1), description: text.optional() }),
]);

const listStep = z.object({
  id: name("a step id"),
  name: z.string().min(1),
  description: text.optional(),
  instructions_file: z.string().min(1).optional(),
  instructions: text.optional(),
  inputs: z.array(inputSpec).default([]),
  outputs: z.record(z.string().min(1), outputSpec).default({}),
  dependencies: z.array(z.string()).default([]),
  reviews: z.array(reviewSpec).default([]),
  hooks: z.record(z.string(), z.unknown()).optional(),
}).refine((s) => s.instructions_file !== undefined || s.instructions !== undefined, {
  message: "a step needs `instructions_file` (a file in the job folder) or `instructions`",
});

const stepListJob = z.object({
  name: name("the job name"),
  version: version.default("0"),
  summary: text.default(""),
  common_job_info_provided_to_all_steps_at_runtime: text.optional(),
  description: text.optional(),
  steps: z.array(listStep),
  workflows: z.array(z.object({
    name: name("a workflow name"),
    summary: text.default(""),
    steps: z.array(z.union([z.string().min(1), z.array(z.string().min(1)).min(1)])),
  })).optional(),
});

const argument = z.object({
  name: z.string().min(1),
  description: text.default(""),
  type: z.enum(JOB_OUTPUT_TYPES),
  review: z.object({
    strategy: z.enum(["individual", "matches_together"]).default("individual"),
    instructions: z.string().min(1),
  }).optional(),
  json_schema: jsonSchema.optional(),
});

const use = z.record(
  z.string().min(1),
  z.object({ required: z.boolean().default(true) }).nullable(),
);

const mapStep = z.object({
  name: name("a step name"),
  instructions: text.optional(),
  sub_workflow: z.object({
    workflow_name: z.string().min(1),
    workflow_job: z.string().min(1).optional(),
  }).optional(),
  inputs: use.default({}),
  outputs: use.default({}),
  process_requirements: z.union([text, z.array(text), z.record(z.string(), text)]).optional(),
}).refine((s) => (s.instructions === undefined) !== (s.sub_workflow === undefined), {
  message: "a step has either `instructions` or `sub_workflow`, not both or neither",
});

const workflowMapJob = z.object({
  name: name("the job name"),
  version: version.default("0"),
  summary: text.default(""),
  common_job_info_provided_to_all_steps_at_runtime: text.optional(),
  step_arguments: z.array(argument).default([]),
  workflows: z.record(
    name("a workflow name"),
    z.object({
      summary: text.default(""),
      steps: z.array(mapStep),
      common_job_info_provided_to_all_steps_at_runtime: text.optional(),
      post_workflow_instructions: text.optional(),
    }),
  ),
});

type ListJob = z.infer<typeof stepListJob>;
type MapJob = z.infer<typeof workflowMapJob>;

/** A job file that could not be read, with every problem found. */
export interface JobParseError {
  /** What is wrong, one problem per line. */
  message: string;
}

function listOutputs(outputs: ListJob["steps"][number]["outputs"]): JobOutputSpec[] {
  return Object.entries(outputs).map(([name, o]) => ({
    name,
    type: o.type,
    description: o.description,
    required: o.required,
    ...(o.json_schema ? { jsonSchema: o.json_schema } : {}),
  }));
}

function listStepSpec(s: ListJob["steps"][number]): JobStepSpec {
  const inputs = s.inputs.map((i): JobInputSpec =>
    "file" in i
      ? {
        name: i.file,
        fromStep: i.from_step,
        ...(i.description ? { description: i.description } : {}),
      }
      : { name: i.name, ...(i.description ? { description: i.description } : {}) }
  );
  const reviews = s.reviews.map((r): JobReviewSpec => ({
    runEach: r.run_each,
    criteria: r.quality_criteria,
    ...(r.additional_review_guidance ? { guidance: r.additional_review_guidance } : {}),
  }));
  return {
    id: s.id,
    name: s.name,
    ...(s.description ? { description: s.description } : {}),
    instructions: s.instructions_file !== undefined
      ? { file: s.instructions_file }
      : { text: s.instructions ?? "" },
    inputs,
    outputs: listOutputs(s.outputs),
    dependencies: s.dependencies,
    reviews,
    hooks: Object.keys(s.hooks ?? {}).sort(),
    processRequirements: [],
  };
}

/** The step-list format: workflows name steps by id; no `workflows` means one, of every step. */
function fromStepList(
  job: ListJob,
): { ok: true; job: JobSpec } | { ok: false; problems: string[] } {
  const steps = new Map(job.steps.map((s) => [s.id, listStepSpec(s)]));
  const problems: string[] = [];
  if (steps.size !== job.steps.length) problems.push("steps: two steps share an id");
  const declared = job.workflows ??
    [{ name: job.name, summary: job.summary, steps: [...steps.keys()] }];
  const workflows = declared.map((w, wi) => ({
    name: w.name,
    summary: w.summary,
    entries: w.steps.map((entry, ei) =>
      (Array.isArray(entry) ? entry : [entry]).flatMap((id) => {
        const step = steps.get(id);
        if (!step) {
          problems.push(
            `workflows[${wi}].steps[${ei}]: unknown step \`${id}\`; steps: ${
              [...steps.keys()].join(", ")
            }`,
          );
        }
        return step ? [step] : [];
      })
    ),
  }));
  if (problems.length > 0) return { ok: false, problems };
  return {
    ok: true,
    job: {
      name: job.name,
      version: job.version,
      summary: job.summary,
      commonJobInfo: job.common_job_info_provided_to_all_steps_at_runtime ?? job.description ?? "",
      format: "step_list",
      workflows,
    },
  };
}

function requirementsOf(
  value: MapJob["workflows"][string]["steps"][number]["process_requirements"],
) {
  if (value === undefined) return [];
  if (typeof value === "string") return [value];
  if (Array.isArray(value)) return value;
  return Object.entries(value).map(([k, v]) => `${k}: ${v}`);
}

/** One workflow-map step: its outputs and reviews come from the job's step arguments. */
function mapStepSpec(
  s: MapJob["workflows"][string]["steps"][number],
  at: { args: Map<string, MapJob["step_arguments"][number]>; problems: string[]; where: string },
): JobStepSpec {
  const argOf = (key: string, use: string) => {
    const arg = at.args.get(key);
    if (!arg) {
      at.problems.push(
        `${at.where}.${use}: unknown step argument \`${key}\`; step_arguments: ${
          [...at.args.keys()].join(", ") || "(none)"
        }`,
      );
    }
    return arg;
  };
  const outputs: JobOutputSpec[] = [];
  const reviews: JobReviewSpec[] = [];
  for (const [key, how] of Object.entries(s.outputs)) {
    const arg = argOf(key, "outputs");
    if (!arg) continue;
    outputs.push({
      name: key,
      type: arg.type,
      description: arg.description,
      required: how?.required ?? true,
      ...(arg.json_schema ? { jsonSchema: arg.json_schema } : {}),
    });
    if (arg.review) {
      reviews.push({
        runEach: key,
        criteria: {},
        guidance: arg.review.instructions,
        strategy: arg.review.strategy,
      });
    }
  }
  const inputs = Object.entries(s.inputs).flatMap(([key, how]): JobInputSpec[] => {
    const arg = argOf(key, "inputs");
    return arg
      ? [{ name: key, description: arg.description, required: how?.required ?? true }]
      : [];
  });
  const sub = s.sub_workflow;
  return {
    id: s.name,
    name: s.name,
    instructions: { text: s.instructions ?? "" },
    inputs,
    outputs,
    dependencies: [],
    reviews,
    hooks: [],
    processRequirements: requirementsOf(s.process_requirements),
    ...(sub
      ? {
        subWorkflow: {
          workflow: sub.workflow_name,
          ...(sub.workflow_job ? { job: sub.workflow_job } : {}),
        },
      }
      : {}),
  };
}

function fromWorkflowMap(
  job: MapJob,
): { ok: true; job: JobSpec } | { ok: false; problems: string[] } {
  const args = new Map(job.step_arguments.map((a) => [a.name, a]));
  const problems: string[] = [];
  const workflows = Object.entries(job.workflows).map(([wname, w]) => {
    const seen = new Set<string>();
    const entries = w.steps.map((s, i) => {
      if (seen.has(s.name)) {
        problems.push(`workflows.${wname}.steps[${i}]: a second step named \`${s.name}\``);
      }
      seen.add(s.name);
      return [mapStepSpec(s, { args, problems, where: `workflows.${wname}.steps[${i}]` })];
    });
    return {
      name: wname,
      summary: w.summary,
      entries,
      ...(w.common_job_info_provided_to_all_steps_at_runtime !== undefined
        ? { commonJobInfo: w.common_job_info_provided_to_all_steps_at_runtime }
        : {}),
      ...(w.post_workflow_instructions !== undefined
        ? { postWorkflowInstructions: w.post_workflow_instructions }
        : {}),
    };
  });
  if (problems.length > 0) return { ok: false, problems };
  return {
    ok: true,
    job: {
      name: job.name,
      version: job.version,
      summary: job.summary,
      commonJobInfo: job.common_job_info_provided_to_all_steps_at_runtime ?? "",
      format: "workflow_map",
      workflows,
    },
  };
}

function zodProblems(error: z.ZodError): string[] {
  return error.issues.slice(0, 10).map((i) => `${formatPath(i.path) || "(file)"}: ${i.message}`);
}

/** Parses a `job.yml` of either format; a problem is an error naming where it is. */
export async function parseJobYaml(
  text: string,
): Promise<{ ok: true; job: JobSpec } | { ok: false; error: JobParseError }> {
  const parseYaml = await yamlParser();
  let data: unknown;
  try {
    data = parseYaml(text);
  } catch (error) {
    return { ok: false, error: { message: `YAML syntax error: ${(error as Error).message}` } };
  }
  if (!data || typeof data !== "object" || Array.isArray(data)) {
    return {
      ok: false,
      error: { message: "job.yml must be a mapping with `name`, `summary` and `workflows`" },
    };
  }
  const record = data as Record<string, unknown>;
  const isList = Array.isArray(record.steps);
  const parsed = isList ? stepListJob.safeParse(data) : workflowMapJob.safeParse(data);
  if (!parsed.success) {
    return { ok: false, error: { message: zodProblems(parsed.error).join("\n") } };
  }
  const job = isList
    ? fromStepList(parsed.data as ListJob)
    : fromWorkflowMap(parsed.data as MapJob);
  return job.ok ? job : { ok: false, error: { message: job.problems.join("\n") } };
}

/** The `name` a job file declares, when it can be read, for error reports. */
export async function declaredJobName(text: string): Promise<string | null> {
  const parseYaml = await yamlParser();
  try {
    const data = parseYaml(text) as { name?: unknown } | null;
    return typeof data?.name === "string" ? data.name : null;
  } catch {
    return null;
  }
}
