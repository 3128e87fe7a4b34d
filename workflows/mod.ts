/**
 * The bundled `waymark.*` workflows and routines, embedded as text so they travel inside a compiled
 * binary, a URL import or the npm build, with no file read beside the source. A new file here
 * must also be listed below: only what is imported is embedded.
 * @module
 */
import type { SourceFile } from "../engine/workflow/catalog.ts";
import addTests from "./waymark.add_tests.jsonc" with { type: "text" };
import bugInvestigation from "./waymark.bug_investigation.jsonc" with { type: "text" };
import codeReview from "./waymark.code_review.jsonc" with { type: "text" };
import codebaseExploration from "./waymark.codebase_exploration.jsonc" with { type: "text" };
import dataMigration from "./waymark.data_migration.jsonc" with { type: "text" };
import dependencyUpgrade from "./waymark.dependency_upgrade.jsonc" with { type: "text" };
import docsUpdate from "./waymark.docs_update.jsonc" with { type: "text" };
import featurePlanning from "./waymark.feature_planning.jsonc" with { type: "text" };
import incidentPostmortem from "./waymark.incident_postmortem.jsonc" with { type: "text" };
import performanceInvestigation from "./waymark.performance_investigation.jsonc" with {
  type: "text",
};
import pullRequestPreparation from "./waymark.pull_request_preparation.jsonc" with { type: "text" };
import routineTestBaseline from "./waymark.routine-test_baseline.jsonc" with { type: "text" };
import routineVerifyAgainstBaseline from "./waymark.routine-verify_against_baseline.jsonc" with {
  type: "text",
};
import safeRefactor from "./waymark.safe_refactor.jsonc" with { type: "text" };
import securityReview from "./waymark.security_review.jsonc" with { type: "text" };
import testFirstImplementation from "./waymark.test_first_implementation.jsonc" with {
  type: "text",
};
import workflowAuthoring from "./waymark.workflow_authoring.jsonc" with { type: "text" };

/** Every bundled file: the workflows and the routines they call. */
export const BUNDLED_WORKFLOWS: readonly SourceFile[] = [
  { source: "bundled", file: "bundled:waymark.add_tests.jsonc", text: addTests },
  { source: "bundled", file: "bundled:waymark.bug_investigation.jsonc", text: bugInvestigation },
  { source: "bundled", file: "bundled:waymark.code_review.jsonc", text: codeReview },
  {
    source: "bundled",
    file: "bundled:waymark.codebase_exploration.jsonc",
    text: codebaseExploration,
  },
  { source: "bundled", file: "bundled:waymark.data_migration.jsonc", text: dataMigration },
  { source: "bundled", file: "bundled:waymark.dependency_upgrade.jsonc", text: dependencyUpgrade },
  { source: "bundled", file: "bundled:waymark.docs_update.jsonc", text: docsUpdate },
  { source: "bundled", file: "bundled:waymark.feature_planning.jsonc", text: featurePlanning },
  {
    source: "bundled",
    file: "bundled:waymark.incident_postmortem.jsonc",
    text: incidentPostmortem,
  },
  {
    source: "bundled",
    file: "bundled:waymark.performance_investigation.jsonc",
    text: performanceInvestigation,
  },
  {
    source: "bundled",
    file: "bundled:waymark.pull_request_preparation.jsonc",
    text: pullRequestPreparation,
  },
  {
    source: "bundled",
    file: "bundled:waymark.routine-test_baseline.jsonc",
    text: routineTestBaseline,
  },
  {
    source: "bundled",
    file: "bundled:waymark.routine-verify_against_baseline.jsonc",
    text: routineVerifyAgainstBaseline,
  },
  { source: "bundled", file: "bundled:waymark.safe_refactor.jsonc", text: safeRefactor },
  { source: "bundled", file: "bundled:waymark.security_review.jsonc", text: securityReview },
  {
    source: "bundled",
    file: "bundled:waymark.test_first_implementation.jsonc",
    text: testFirstImplementation,
  },
  { source: "bundled", file: "bundled:waymark.workflow_authoring.jsonc", text: workflowAuthoring },
];
