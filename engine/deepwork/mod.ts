/**
 * DeepWork jobs on waymark's engine: `job.yml` in both formats compiled to waymark's workflows,
 * and the use-cases of the DeepWork tool profile (get_workflows, start_workflow, finished_step,
 * abort_workflow, go_to_step) over the workflow stack. Pure, like the rest of the engine.
 * @module
 */
export * from "./job.ts";
export { declaredJobName, type JobParseError, parseJobYaml } from "./parse.ts";
export { compileJobWorkflow, JOB_OUTPUTS_CONTRACT, jobWorkflowId } from "./compile.ts";
export * from "./catalog.ts";
export * from "./ports.ts";
export * from "./responses.ts";
export { outputsProblem } from "./outputs.ts";
export { readVerdict } from "./review.ts";
export { getWorkflows, type JobStartInput, startJobWorkflow } from "./start.ts";
export { type FinishInput, finishStep } from "./finish.ts";
export { abortJobWorkflow, type JobAbortInput } from "./abort.ts";
export { goToStep, type GoToStepInput } from "./go_to_step.ts";
export { findStack, type FoundStack, type StackCaller } from "./find_stack.ts";
export { stackEntries, workflowLabel } from "./stack.ts";
