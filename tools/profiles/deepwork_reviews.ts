/**
 * The DeepWork profile's tools outside the workflow lifecycle: review rules
 * (`get_review_instructions`, `get_configured_reviews`, `mark_review_as_passed`), session jobs
 * (`register_session_job`, `get_session_job`) and named schemas (`get_named_schemas`). Thin:
 * the use-cases are in `engine/review/` and `engine/deepwork/session_jobs.ts`; the workspace
 * is the client's MCP root, read through git (`deepwork/git_workspace.ts`).
 * @module
 */
import { z } from "npm:zod@4.6.7";
import type { JobPorts } from "../../engine/deepwork/ports.ts";
import { getSessionJob, registerSessionJob } from "../../engine/deepwork/session_jobs.ts";
import { LIMITS } from "../../engine/model/limits.ts";
import type { PlannedReview } from "../../engine/review/plan.ts";
import type { NamedSchemaSource, ReviewWorkspace } from "../../engine/review/ports.ts";
import {
  configuredReviewsSchema,
  namedSchemasSchema,
  reviewInstructionsSchema,
  reviewPassedSchema,
} from "../../engine/review/responses.ts";
import {
  getConfiguredReviews,
  getNamedSchemas,
  getReviewInstructions,
  markReviewAsPassed,
} from "../../engine/review/reviews.ts";
import type { EngineDeps } from "../../engine/model/ports.ts";
import { fail, type Result } from "../../engine/model/result.ts";
import {
  defineTool,
  type ToolContext,
  type ToolDefinition,
  type ToolSpec,
} from "../calls/define_tool.ts";
import { type CallAt, here, logged } from "./deepwork/call_log.ts";

/** What the review and session-job tools are built from. */
export interface ReviewToolPorts {
  /** The DeepWork ports (files, presence for the log). */
  jobs: JobPorts;
  /** Named schemas. */
  schemas: NamedSchemaSource;
  /** The workspace at a root. */
  workspace: (root: string) => ReviewWorkspace;
  /** Where each call's log line goes. */
  log?: (line: string) => void;
}

const files = z.array(z.string().min(1).max(4096)).max(LIMITS.outputFiles);
const jobName = z.string().max(LIMITS.nameChars).describe("^[a-z][a-z0-9_]*$");
const sessionKey = z.string().max(LIMITS.nameChars).describe(
  "Your session's id: the session the job belongs to.",
);

function rootOf(ctx: ToolContext): Result<string> {
  const root = here(ctx).workspace;
  if (root !== null) return { ok: true, value: root };
  return fail(
    "INVALID_ARGUMENTS",
    "This call needs a workspace folder: the client named no file root (MCP roots), and the server's working directory is not one.",
  );
}

const render = (value: unknown) => JSON.stringify(value, null, 2);

/** A tool here that only reads. */
const READS = { readOnly: true, idempotent: true } as const;

/** What a call of these tools logs: its tool and the caller's stack (no `session_id` here). */
function callAt(ports: ReviewToolPorts) {
  return (tool: string, deps: EngineDeps, ctx: ToolContext): CallAt => ({
    tool,
    log: ports.log,
    deps,
    input: {},
    ctx,
    presence: ports.jobs.presence,
  });
}

/**
 * A tool here: it reads the client's root workspace (`runIn` gets it), answers JSON text, ends
 * nothing for good, and each call is logged with the tool's name.
 */
function rootTool(ports: ReviewToolPorts) {
  const at = callAt(ports);
  return <In, Out extends Record<string, unknown>>(
    spec: Omit<ToolSpec<In, Out>, "run" | "workspace" | "render" | "destructive"> & {
      runIn(
        ws: ReviewWorkspace,
        call: { deps: EngineDeps; input: NoInfer<In> },
      ): Promise<Result<NoInfer<Out>>>;
    },
  ): ToolDefinition => {
    const { runIn, ...facts } = spec;
    return defineTool<In, Out>({
      ...facts,
      destructive: false,
      workspace: "always",
      render,
      run: async (deps, input, ctx) => {
        const root = rootOf(ctx);
        return logged(
          at(spec.name, deps, ctx),
          root.ok ? await runIn(ports.workspace(root.value), { deps, input }) : root,
        );
      },
    });
  };
}

/** The review tools. */
function reviewTools(ports: ReviewToolPorts, handedOut: Map<string, PlannedReview>) {
  const tool = rootTool(ports);

  return [
    tool({
      name: "get_review_instructions",
      title: "Review tasks for what changed",
      description:
        "The review tasks the project's .deepreview rules and named schemas ask for over the changed files (committed on the branch since main or master, staged, unstaged, untracked; or the `files` given). Run each task's `prompt` in its own sub-agent (`subagent_type`, `description`), in parallel. Reviews already passed for the same contents are left out. `message` says in a line why there is nothing to review.",
      input: z.object({ files: files.optional().describe("Review these files instead.") })
        .strict(),
      output: reviewInstructionsSchema,
      ...READS,
      runIn: (ws, { deps, input }) =>
        getReviewInstructions(
          { store: deps.store, schemas: ports.schemas, handedOut },
          { ws, files: input.files },
        ),
    }),
    tool({
      name: "get_configured_reviews",
      title: "List the review rules",
      description:
        "Every review rule of the project (.deepreview files and named schemas): `name`, `description`, `defining_file` (`path:line`). With `only_rules_matching_files`, only the rules that match at least one of those files. Broken rule files are listed in `errors`.",
      input: z.object({ only_rules_matching_files: files.optional() }).strict(),
      output: configuredReviewsSchema,
      ...READS,
      runIn: (ws, { input }) =>
        getConfiguredReviews({ schemas: ports.schemas }, {
          ws,
          onlyMatching: input.only_rules_matching_files,
        }),
    }),
    tool({
      name: "mark_review_as_passed",
      title: "Mark a review as passed",
      description:
        "Record that the review `review_id` found nothing left to fix. It is not handed out again until one of its files changes. The pass is kept in waymark's log (it survives restarts and is shared through a team store).",
      input: z.object({ review_id: z.string().max(LIMITS.nameChars) }).strict(),
      output: reviewPassedSchema,
      readOnly: false,
      idempotent: true,
      runIn: (ws, { deps, input }) =>
        markReviewAsPassed(
          { store: deps.store, schemas: ports.schemas, handedOut },
          { ws, reviewId: input.review_id },
        ),
    }),
    tool({
      name: "get_named_schemas",
      title: "List the named schemas",
      description:
        "The named file schemas (the project's .deepwork/schemas, configured folders and the bundled set): `name`, `summary`, `matchers` (globs of the files each governs). Each is also a review rule for the files it matches.",
      input: z.object({}).strict(),
      output: namedSchemasSchema,
      ...READS,
      runIn: (ws) => getNamedSchemas({ schemas: ports.schemas }, { ws }),
    }),
  ];
}

/** The session-job tools. */
function sessionJobTools(ports: ReviewToolPorts) {
  const tool = rootTool(ports);
  return [
    tool({
      name: "register_session_job",
      title: "Register a job for this session",
      description:
        "Define a job for your session only: `job_definition_yaml` is a job.yml (steps' instructions inline), checked like any job. start_workflow called with the same `session_id` finds it. Registering the same `job_name` again replaces it.",
      input: z.object({
        job_name: jobName,
        job_definition_yaml: z.string().max(LIMITS.contextBytes),
        session_id: sessionKey,
      }).strict(),
      output: z.object({
        status: z.literal("registered"),
        job_name: z.string(),
        job_dir: z.string(),
        message: z.string(),
      }),
      readOnly: false,
      idempotent: true,
      runIn: (ws, { input }) => registerSessionJob(ports.jobs, { ...input, root: ws.root }),
    }),
    tool({
      name: "get_session_job",
      title: "Read a session's job",
      description:
        "The job definition (`job_definition_yaml`) registered as `job_name` for `session_id`.",
      input: z.object({ job_name: jobName, session_id: sessionKey }).strict(),
      output: z.object({
        job_name: z.string(),
        session_id: z.string(),
        job_definition_yaml: z.string(),
      }),
      ...READS,
      runIn: (ws, { input }) => getSessionJob(ports.jobs, { ...input, root: ws.root }),
    }),
  ];
}

/** The tools outside the workflow lifecycle, in the order they are listed. */
export function deepworkExtraTools(ports: ReviewToolPorts): ToolDefinition[] {
  const handedOut = new Map<string, PlannedReview>();
  const [instructions, configured, passed, schemas] = reviewTools(ports, handedOut);
  return [instructions!, configured!, passed!, ...sessionJobTools(ports), schemas!];
}
