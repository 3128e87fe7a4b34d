/**
 * The review tools' use-cases: the tasks for what changed (`get_review_instructions`), the
 * rules configured (`get_configured_reviews`), the named schemas (`get_named_schemas`) and a
 * review's pass (`mark_review_as_passed`), recorded as a `review_passed` event in the
 * workspace's reviews session so it survives restarts, travels in bundles and is shared by a
 * team store. Rules come from `.deepreview` files and named schemas alike.
 * @module
 */
import type { YamlParse } from "../deepwork/yaml.ts";
import { yamlLinedParser, yamlParser } from "../deepwork/yaml.ts";
import { sha256HexSync } from "../common/hash.ts";
import type { Store } from "../model/ports.ts";
import type { Principal } from "../access/principal.ts";
import { fail, ok, type Result } from "../model/result.ts";
import { guard } from "../run/error_guard.ts";
import { projectPath } from "./paths.ts";
import { definingFile, type PlannedReview, planReviews, REVIEW_ID, ruleMatcher } from "./plan.ts";
import type { NamedSchemaSource, ReviewWorkspace } from "./ports.ts";
import { reviewTask } from "./prompt.ts";
import type {
  ConfiguredReviews,
  NamedSchemas,
  ReviewInstructions,
  ReviewPassed,
} from "./responses.ts";
import { readRuleFiles } from "./rule_file.ts";
import { schemaRule } from "./named_schemas.ts";
import type { ReviewRule, RuleProblem } from "./rule.ts";

/** Most bytes of a rule file or instructions file read. */
const RULE_TEXT_BYTES = 1024 * 1024;
/** Reviews remembered as handed out, per server (the oldest are forgotten past it). */
const REMEMBERED = 10_000;

/** What the review use-cases use besides the workspace. */
export interface ReviewPorts {
  /** The store (passes are read and recorded there). */
  store: Store;
  /** Named schemas. */
  schemas: NamedSchemaSource;
  /** Reviews handed out by this server, by id, so a pass needs no second detection. */
  handedOut: Map<string, PlannedReview>;
}

/** Every rule visible in the workspace (rule files, then named schemas), and the problems. */
export async function workspaceRules(
  ws: ReviewWorkspace,
  schemas: NamedSchemaSource,
): Promise<{ rules: ReviewRule[]; problems: RuleProblem[] }> {
  const parse = await yamlLinedParser();
  const problems: RuleProblem[] = [];
  const files: { path: string; text: string }[] = [];
  for (const path of await ws.ruleFiles()) {
    const read = await ws.read(path, RULE_TEXT_BYTES);
    if (read === null) problems.push({ file: path, line: null, message: "cannot be read" });
    else files.push({ path, text: read.text });
  }
  const texts = { read: async (p: string) => (await ws.read(p, RULE_TEXT_BYTES))?.text ?? null };
  const fromFiles = await readRuleFiles(files, { parse, texts });
  const named = await schemas.load(ws.root);
  return {
    rules: [...fromFiles.rules, ...named.schemas.map(schemaRule)],
    problems: [...problems, ...fromFiles.problems, ...named.problems],
  };
}

/** Project paths of files a caller named (relative, or absolute inside the root), or why not. */
export function namedFiles(root: string, files: readonly string[]): Result<string[]> {
  const out: string[] = [];
  for (const file of files) {
    const rel = file.startsWith(`${root}/`) ? file.slice(root.length + 1) : file;
    const path = projectPath("", rel);
    if (path === null) {
      return fail(
        "INVALID_ARGUMENTS",
        `File ${
          JSON.stringify(file)
        } is not inside the project ${root}; name files relative to it.`,
        { details: { file } },
      );
    }
    out.push(path);
  }
  return ok([...new Set(out)]);
}

/** The files to review: those named (that exist), or what git shows as changed. */
async function filesToReview(
  ws: ReviewWorkspace,
  at: { files?: readonly string[]; baseRef?: string },
): Promise<Result<{ files: string[]; base: string | null }>> {
  if (at.files !== undefined) {
    const named = namedFiles(ws.root, at.files);
    if (!named.ok) return named;
    const present: string[] = [];
    for (const f of named.value) if ((await ws.hash(f)) !== null) present.push(f);
    return ok({ files: present.sort(), base: null });
  }
  const changes = await ws.changes({ baseRef: at.baseRef });
  if (!changes.ok) {
    return fail(
      "CHANGES_UNAVAILABLE",
      `Cannot tell which files changed in ${ws.root}: ${changes.message}. Pass \`files\` to review those files instead.`,
      { details: { workspace: ws.root } },
    );
  }
  return ok({ files: changes.files, base: changes.base });
}

function nothingMessage(at: { rules: number; files: number; planned: number }): string {
  if (at.rules === 0) return "Nothing to review: no .deepreview rules or named schemas apply here.";
  if (at.files === 0) return "Nothing to review: no changed files.";
  if (at.planned === 0) {
    return `Nothing to review: no rule matches the ${at.files} changed file(s).`;
  }
  return `Nothing to review: all ${at.planned} review(s) already passed for these contents.`;
}

/** `get_review_instructions`: a task per review the changed (or named) files need. */
export function getReviewInstructions(
  deps: ReviewPorts,
  at: { ws: ReviewWorkspace; files?: readonly string[]; baseRef?: string },
): Promise<Result<ReviewInstructions>> {
  return guard(async () => {
    const [found, { rules, problems }] = await Promise.all([
      filesToReview(at.ws, at),
      workspaceRules(at.ws, deps.schemas),
    ]);
    if (!found.ok) return found;
    const changed = found.value.files;
    const planned = await planReviews(at.ws, { rules, changed });
    const passed = await deps.store.getPassedReviews(planned.map((p) => p.reviewId));
    const due = planned.filter((p) => !passed.has(p.reviewId));
    const parse: YamlParse = await yamlParser();
    const tasks = [];
    for (const review of due) {
      remember(deps.handedOut, review);
      tasks.push(await reviewTask(at.ws, { review, changed, parse }));
    }
    const message = tasks.length > 0
      ? `${tasks.length} review task(s) for ${changed.length} changed file(s): run each in its own sub-agent, in parallel.`
      : nothingMessage({ rules: rules.length, files: changed.length, planned: planned.length });
    return ok({
      tasks,
      message: problems.length > 0
        ? `${message} ${problems.length} problem(s) in rule files: see errors.`
        : message,
      changed_files: changed,
      base: found.value.base,
      already_passed: planned.filter((p) => passed.has(p.reviewId)).map((p) => p.reviewId),
      errors: problems,
    });
  });
}

function remember(handedOut: Map<string, PlannedReview>, review: PlannedReview): void {
  handedOut.delete(review.reviewId);
  handedOut.set(review.reviewId, review);
  if (handedOut.size > REMEMBERED) handedOut.delete(handedOut.keys().next().value!);
}

/** `get_configured_reviews`: every rule, or those matching one of the files named. */
export function getConfiguredReviews(
  deps: Pick<ReviewPorts, "schemas">,
  at: { ws: ReviewWorkspace; onlyMatching?: readonly string[] },
): Promise<Result<ConfiguredReviews>> {
  return guard(async () => {
    const { rules, problems } = await workspaceRules(at.ws, deps.schemas);
    let shown = rules;
    if (at.onlyMatching !== undefined) {
      const named = namedFiles(at.ws.root, at.onlyMatching);
      if (!named.ok) return named;
      shown = rules.filter((r) => named.value.some(ruleMatcher(r)));
    }
    return ok({
      reviews: shown.map((r) => ({
        name: r.name,
        description: r.description,
        defining_file: r.definedAt,
      })),
      errors: problems,
    });
  });
}

/** `get_named_schemas`: every named schema visible from the workspace. */
export function getNamedSchemas(
  deps: Pick<ReviewPorts, "schemas">,
  at: { ws: Pick<ReviewWorkspace, "root"> },
): Promise<Result<NamedSchemas>> {
  return guard(async () => {
    const loaded = await deps.schemas.load(at.ws.root);
    return ok({
      schemas: loaded.schemas.map((s) => ({
        name: s.name,
        summary: s.summary,
        matchers: s.matchers,
        source: s.source,
        file: s.file,
        has_json_schema: s.jsonSchema !== null,
      })),
      errors: loaded.problems,
    });
  });
}

/** Why a review id cannot be one, or `null`. */
export function reviewIdProblem(id: string): string | null {
  if (id.trim() === "") return "review_id is empty";
  if (/[/\\]|\.\.|\0/.test(id) || id.startsWith(".")) {
    return `review_id ${
      JSON.stringify(id.slice(0, 100))
    } could reach outside the project (it names a path)`;
  }
  if (!REVIEW_ID.test(id)) {
    return `review_id ${
      JSON.stringify(id.slice(0, 100))
    } is not a review id (\`<rule>--<24 hex digits>\`)`;
  }
  return null;
}

/** The workspace's reviews session: one per workspace root, its id derived from the root. */
export function reviewsSessionId(root: string): string {
  return sha256HexSync(`waymark reviews\n${root}`).slice(0, 16);
}

/** The review `id` names, as handed out or found again among what changed now. */
async function findReview(
  deps: ReviewPorts,
  at: { ws: ReviewWorkspace; id: string },
): Promise<PlannedReview | null> {
  const known = deps.handedOut.get(at.id);
  if (known) {
    for (const f of known.files) if ((await at.ws.hash(f.path)) !== f.sha256) return null;
    return known;
  }
  const found = await filesToReview(at.ws, {});
  if (!found.ok) return null;
  const { rules } = await workspaceRules(at.ws, deps.schemas);
  const planned = await planReviews(at.ws, { rules, changed: found.value.files });
  return planned.find((p) => p.reviewId === at.id) ?? null;
}

/** `mark_review_as_passed`: records the pass, unless one is already recorded. */
export function markReviewAsPassed(
  deps: ReviewPorts,
  at: { ws: ReviewWorkspace; reviewId: string; principal?: Principal },
): Promise<Result<ReviewPassed>> {
  return guard(async () => {
    const problem = reviewIdProblem(at.reviewId);
    if (problem) {
      return fail("INVALID_ARGUMENTS", `${problem}; pass a review_id a review task named.`, {
        details: { review_id: at.reviewId.slice(0, 200) },
      });
    }
    const review = await findReview(deps, { ws: at.ws, id: at.reviewId });
    if (!review) {
      return fail(
        "REVIEW_NOT_FOUND",
        `No current review has id ${at.reviewId}: its files changed since it was handed out, or it is not among the reviews of what changed. Call get_review_instructions for the current reviews.`,
        { details: { review_id: at.reviewId } },
      );
    }
    const files = review.files.map((f) => f.path);
    const sessionId = reviewsSessionId(at.ws.root);
    const status = await deps.store.write(async (tx) => {
      if ((await tx.getPassedReviews([review.reviewId])).size > 0) return "already_passed" as const;
      const events = [];
      if (!(await tx.getSession(sessionId))) {
        events.push({
          kind: "session_created" as const,
          sessionId,
          title: `Review passes: ${at.ws.root}`,
          sessionKind: "reviews" as const,
        });
      }
      events.push({
        kind: "review_passed" as const,
        sessionId,
        reviewId: review.reviewId,
        rule: review.rule.name,
        definedIn: definingFile(review.rule.definedAt),
        files: review.files,
        ...(at.principal ? { principal: at.principal } : {}),
      });
      await tx.append(events);
      return "passed" as const;
    });
    return ok({
      status,
      review_id: review.reviewId,
      rule_name: review.rule.name,
      files,
      message: status === "passed"
        ? `Review ${review.reviewId} passed; it is not handed out again until one of its files changes.`
        : `Review ${review.reviewId} had already passed for these contents.`,
    });
  });
}
