/**
 * The engine's public face: what the adapters beside it (`tools/`, `cli/`, `web/`) and library
 * users (`waymark/engine`) call: the use-cases and their answers' schemas, the workflow format's
 * loading and rendering, tokens, preferences and the errors. Named exports only, within a budget
 * (`tests/unit/architecture_test.ts`): anything else is imported from the module that defines it
 * (the store adapters do, for the events and projections they persist). Pure: no runtime APIs,
 * no I/O it was not handed.
 * @module
 */
export { abortJobWorkflow } from "./deepwork/abort.ts";
export { jobsAsWorkflows, type JobSource } from "./deepwork/job_catalog.ts";
export { findStack } from "./deepwork/find_stack.ts";
export { finishStep } from "./deepwork/finish.ts";
export { goToStep } from "./deepwork/go_to_step.ts";
export {
  type AgentPresence,
  type FileRefusal,
  type JobPorts,
  type ReviewRun,
  type ReviewRunner,
  type WorkspaceFiles,
} from "./deepwork/ports.ts";
export {
  abortResponseSchema,
  finishedResponseSchema,
  getWorkflowsResponseSchema,
  goToStepResponseSchema,
  type StackEntry,
  startResponseSchema,
} from "./deepwork/job_responses.ts";
export { stackEntries } from "./deepwork/stack.ts";
export { getWorkflows, startJobWorkflow } from "./deepwork/start.ts";
export { parseRunLabel, parseSessionLabel, runLabel, sessionLabel } from "./model/ids.ts";
export { LIMITS } from "./model/limits.ts";
export {
  type BranchStep,
  type EngineDeps,
  type NodeRecord,
  type RunListing,
  type Store,
  type StoreReader,
  type WorkflowSource,
} from "./model/ports.ts";
export {
  applyPreferences,
  DEFAULT_PREFERENCES,
  type Preferences,
  type PreferencesPatch,
  preferencesPatchSchema,
} from "./model/preferences.ts";
export {
  checkpointStepResponseSchema,
  type InspectResponse,
  inspectResponseSchema,
  type ListResponse,
  listResponseSchema,
  type ResumeResponse,
  resumeResponseSchema,
  startStepResponseSchema,
  type StepProgress,
  type StepResponse,
  stepResponseSchema,
} from "./answers/responses.ts";
export {
  type ErrorCode,
  type Result,
  type Retry,
  StorageBusyError,
  StorageCorruptionError,
  StorageUnavailableError,
  type WaymarkError,
  waymarkErrorSchema,
} from "./model/result.ts";
export {
  renderError,
  renderInspect,
  renderList,
  renderResume,
  renderStepResponse,
} from "./answers/text.ts";
export { verifyToken } from "./access/tokens.ts";
export { abortRun, abortWorkflow, runAbortResponseSchema } from "./use_cases/abort_run.ts";
export { type CheckpointInput, checkpointWorkflow } from "./use_cases/checkpoint_workflow.ts";
export { type ContinueInput, continueWorkflow } from "./use_cases/continue_workflow.ts";
export { inspectWorkflow } from "./use_cases/inspect_workflow.ts";
export { listWorkflows } from "./use_cases/list_workflows.ts";
export { type StepOutput } from "./run/node_events.ts";
export { type AnsweredNode, type CallOptions } from "./run/record_attempt.ts";
export { RESUME_MAX_LIMIT, type ResumeInput, resumeSession } from "./use_cases/resume_session.ts";
export { startSession, type StartSessionInput } from "./use_cases/start_session.ts";
export { type StartInput, startWorkflow } from "./use_cases/start_workflow.ts";
export { isTerminal, runIdOfTask, type UserQuestion } from "./run/task_status.ts";
export {
  listTasks,
  PLAN_BRANCH_WINDOW,
  type TaskView,
  taskView,
  tipResponse,
} from "./use_cases/task_views.ts";
export { pendingQuestions, recordUserInput } from "./use_cases/user_input.ts";
export { type TaskStatus } from "./model/vocabulary.ts";
export {
  loadWorkflowFile,
  loadWorkflowFiles,
  parseSourceFile,
  resolveCatalog,
} from "./workflow/catalog.ts";
export { compileWorkflow, isRoutineId } from "./workflow/compile.ts";
export { type CompiledStep, type CompiledWorkflow } from "./workflow/compiled.ts";
export { allSteps, type RunState, stepCount } from "./workflow/interpreter.ts";
export { pendingStep } from "./workflow/pending.ts";
export { workflowJsonSchema } from "./workflow/json_schema.ts";
export { formatLoadError, parseWorkflowText } from "./workflow/parse.ts";
export { formatPath } from "./common/issue_path.ts";
export { backtrackingPatterns } from "./workflow/pattern_check.ts";
export { unfillablePlaceholders } from "./workflow/placeholder_check.ts";
export { type WorkflowFile } from "./workflow/schema.ts";
export { type WorkspaceObservation } from "./model/workspace.ts";
