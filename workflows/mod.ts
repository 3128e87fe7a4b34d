/**
 * The bundled `wr.*` workflows, embedded as text so they travel inside a compiled binary, a
 * URL import or the npm build, with no file read beside the source.
 * @module
 */
import type { SourceFile } from "../engine/mod.ts";
import bugInvestigation from "./wr.bug_investigation.jsonc" with { type: "text" };
import codeReview from "./wr.code_review.jsonc" with { type: "text" };
import featurePlanning from "./wr.feature_planning.jsonc" with { type: "text" };

/** Every bundled workflow file. */
export const BUNDLED_WORKFLOWS: readonly SourceFile[] = [
  { source: "bundled", file: "bundled:wr.bug_investigation.jsonc", text: bugInvestigation },
  { source: "bundled", file: "bundled:wr.code_review.jsonc", text: codeReview },
  { source: "bundled", file: "bundled:wr.feature_planning.jsonc", text: featurePlanning },
];
