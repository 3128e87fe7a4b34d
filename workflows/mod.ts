/**
 * The bundled `wr.*` workflows and routines, embedded as text so they travel inside a compiled
 * binary, a URL import or the npm build, with no file read beside the source. A new file here
 * must also be listed below: only what is imported is embedded.
 * @module
 */
import type { SourceFile } from "../engine/workflow/catalog.ts";
import addTests from "./wr.add_tests.jsonc" with { type: "text" };
import bugInvestigation from "./wr.bug_investigation.jsonc" with { type: "text" };
import codeReview from "./wr.code_review.jsonc" with { type: "text" };
import codebaseExploration from "./wr.codebase_exploration.jsonc" with { type: "text" };
import dataMigration from "./wr.data_migration.jsonc" with { type: "text" };
import dependencyUpgrade from "./wr.dependency_upgrade.jsonc" with { type: "text" };
import docsUpdate from "./wr.docs_update.jsonc" with { type: "text" };
import featurePlanning from "./wr.feature_planning.jsonc" with { type: "text" };
import incidentPostmortem from "./wr.incident_postmortem.jsonc" with { type: "text" };
import performanceInvestigation from "./wr.performance_investigation.jsonc" with { type: "text" };
import pullRequestPreparation from "./wr.pull_request_preparation.jsonc" with { type: "text" };
import routineTestBaseline from "./wr.routine-test_baseline.jsonc" with { type: "text" };
import routineVerifyAgainstBaseline from "./wr.routine-verify_against_baseline.jsonc" with {
  type: "text",
};
import safeRefactor from "./wr.safe_refactor.jsonc" with { type: "text" };
import securityReview from "./wr.security_review.jsonc" with { type: "text" };
import testFirstImplementation from "./wr.test_first_implementation.jsonc" with { type: "text" };
import workflowAuthoring from "./wr.workflow_authoring.jsonc" with { type: "text" };

/** Every bundled file: the workflows and the routines they call. */
export const BUNDLED_WORKFLOWS: readonly SourceFile[] = [
  { source: "bundled", file: "bundled:wr.add_tests.jsonc", text: addTests },
  { source: "bundled", file: "bundled:wr.bug_investigation.jsonc", text: bugInvestigation },
  { source: "bundled", file: "bundled:wr.code_review.jsonc", text: codeReview },
  { source: "bundled", file: "bundled:wr.codebase_exploration.jsonc", text: codebaseExploration },
  { source: "bundled", file: "bundled:wr.data_migration.jsonc", text: dataMigration },
  { source: "bundled", file: "bundled:wr.dependency_upgrade.jsonc", text: dependencyUpgrade },
  { source: "bundled", file: "bundled:wr.docs_update.jsonc", text: docsUpdate },
  { source: "bundled", file: "bundled:wr.feature_planning.jsonc", text: featurePlanning },
  { source: "bundled", file: "bundled:wr.incident_postmortem.jsonc", text: incidentPostmortem },
  {
    source: "bundled",
    file: "bundled:wr.performance_investigation.jsonc",
    text: performanceInvestigation,
  },
  {
    source: "bundled",
    file: "bundled:wr.pull_request_preparation.jsonc",
    text: pullRequestPreparation,
  },
  { source: "bundled", file: "bundled:wr.routine-test_baseline.jsonc", text: routineTestBaseline },
  {
    source: "bundled",
    file: "bundled:wr.routine-verify_against_baseline.jsonc",
    text: routineVerifyAgainstBaseline,
  },
  { source: "bundled", file: "bundled:wr.safe_refactor.jsonc", text: safeRefactor },
  { source: "bundled", file: "bundled:wr.security_review.jsonc", text: securityReview },
  {
    source: "bundled",
    file: "bundled:wr.test_first_implementation.jsonc",
    text: testFirstImplementation,
  },
  { source: "bundled", file: "bundled:wr.workflow_authoring.jsonc", text: workflowAuthoring },
];
