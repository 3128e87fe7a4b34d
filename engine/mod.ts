/**
 * The waymark engine: the workflow format, compiler, tokens, interpreter and the use-cases,
 * written against the ports in `ports.ts`. Pure: no runtime APIs, no I/O it was not handed.
 * @module
 */
export * from "./vocabulary.ts";
export * from "./ids.ts";
export * from "./result.ts";
export * from "./hash.ts";
export * from "./limits.ts";
export * from "./session_rules.ts";
export * from "./tokens.ts";
export * from "./events.ts";
export * from "./ports.ts";
export * from "./workspace.ts";
export * from "./preferences.ts";
export * from "./responses.ts";
export * from "./text.ts";
export * from "./collate.ts";
export * from "./workflow/schema.ts";
export * from "./workflow/ids.ts";
export * from "./workflow/parse.ts";
export * from "./workflow/compile.ts";
export * from "./workflow/compiled.ts";
export * from "./workflow/catalog.ts";
export * from "./workflow/interpreter.ts";
export { evaluateCondition, readVar } from "./workflow/conditions.ts";
export { fillPlaceholders, promptValueText, renderPromptBlocks } from "./workflow/render.ts";
export * from "./workflow/library.ts";
export * from "./contracts.ts";
export * from "./enforce.ts";
export { listWorkflows, summarize } from "./use_cases/list_workflows.ts";
export { inspectWorkflow } from "./use_cases/inspect_workflow.ts";
export { type StartInput, type StartOptions, startWorkflow } from "./use_cases/start_workflow.ts";
export { type ContinueInput, continueWorkflow } from "./use_cases/continue_workflow.ts";
export { type AnsweredNode, type CallOptions } from "./use_cases/record_attempt.ts";
export { type StepOutput } from "./use_cases/node_events.ts";
export { type CheckpointInput, checkpointWorkflow } from "./use_cases/checkpoint_workflow.ts";
export {
  parseQuery,
  RESUME_DEFAULT_LIMIT,
  RESUME_MAX_LIMIT,
  type ResumeInput,
  resumeSession,
} from "./use_cases/resume_session.ts";
export { startSession, type StartSessionInput } from "./use_cases/start_session.ts";
export { SESSION_NOTES_WORKFLOW } from "./use_cases/session_notes.ts";
export { buildRecap, RECAP_BUDGET_BYTES, type RecapOptions } from "./use_cases/recap.ts";
export { workflowJsonSchema } from "./workflow/json_schema.ts";
export { unfillablePlaceholders } from "./workflow/placeholder_check.ts";
export { backtrackingPatterns } from "./workflow/pattern_check.ts";
export {
  type AbortOutcome,
  abortRun,
  abortWorkflow,
  type RunAbortResponse,
  runAbortResponseSchema,
} from "./use_cases/abort_run.ts";
export * from "./deepwork/mod.ts";
export * from "./workflow/plan.ts";
export {
  isTerminal,
  runIdOfTask,
  type TaskFacts,
  taskIdOf,
  taskStatus,
  type UserQuestion,
  userQuestions,
} from "./use_cases/task_status.ts";
export {
  completionsOf,
  listTasks,
  PLAN_BRANCH_WINDOW,
  readTask,
  type TaskView,
  taskView,
  tipResponse,
} from "./use_cases/tasks.ts";
export {
  type PendingQuestions,
  pendingQuestions,
  recordUserInput,
  type UserInput,
  type UserInputOutcome,
} from "./use_cases/user_input.ts";
