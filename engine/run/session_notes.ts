/**
 * The built-in one-step workflow behind checkpoint-only sessions (`start_session`). It has no
 * file, so the drift check skips it.
 * @module
 */
import { COMPILED_FORMAT, type CompiledWorkflow } from "../workflow/compiled.ts";

/** The id of the built-in workflow behind checkpoint-only sessions. */
export const SESSION_NOTES_ID = "waymark.session";

/** The built-in workflow behind checkpoint-only sessions. */
export const SESSION_NOTES_WORKFLOW: CompiledWorkflow = {
  format: COMPILED_FORMAT,
  id: SESSION_NOTES_ID,
  kind: "workflow",
  name: "Session notes",
  description: "A checkpoint-only session: durable notes for work outside any workflow.",
  version: "1.0.0",
  metaGuidance: [],
  capabilities: {},
  features: [],
  contracts: {},
  steps: [{
    kind: "step",
    id: "work",
    title: "Work, and keep durable notes",
    promptTemplate:
      "Work with the user as usual. After substantial progress, call checkpoint_workflow with the stateToken and checkpointToken and a short output.notesMarkdown (what was done, what is next). Start a workflow whenever one fits; acknowledge this step only to close the session.",
    requireConfirmation: false,
  }],
};
