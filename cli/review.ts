/**
 * `waymark review`: the review tasks the workspace's `.deepreview` rules and named schemas ask
 * for, as `get_review_instructions` hands them to an agent, printed for CI and git hooks. What
 * changed comes from git (since the merge-base with `--base-ref`, else main or master), or the
 * files named with `--files` (`--files -` reads them from stdin, one a line). Reviews already
 * passed for the same contents are left out, as over MCP. Exit 0 when it ran, 1 when rule
 * files are broken or what changed cannot be told.
 * @module
 */
import { getReviewInstructions } from "../engine/review/reviews.ts";
import type { ReviewInstructions } from "../engine/review/responses.ts";
import { problemText } from "../engine/review/rule.ts";
import { openCore } from "../open.ts";
import { gitWorkspace } from "../tools/profiles/deepwork/git_workspace.ts";
import type { CommandInput } from "./host.ts";
import { printErr, printOut } from "./terminal.ts";

/** The files `--files` names, with `-` replaced by the lines of stdin. */
async function namedFiles(files: readonly string[] | undefined): Promise<string[] | undefined> {
  if (files === undefined) return undefined;
  if (!files.includes("-")) return [...files];
  const stdin = await new Response(Deno.stdin.readable).text();
  const listed = stdin.split(/\r?\n/).map((l) => l.trim()).filter((l) => l !== "");
  return files.flatMap((f) => f === "-" ? listed : [f]);
}

/** The answer as text: the message, then each task with what a host's sub-agent tool takes. */
export function renderReview(answer: ReviewInstructions): string {
  const lines = [answer.message];
  for (const e of answer.errors) lines.push(`error: ${problemText(e)}`);
  for (const [i, t] of answer.tasks.entries()) {
    lines.push(
      "",
      `=== task ${i + 1} of ${answer.tasks.length}: ${t.description} ===`,
      `review_id: ${t.review_id}`,
      `subagent_type: ${t.subagent_type}`,
      `rule: ${t.rule_name} (${t.defining_file})`,
      "",
      t.prompt,
    );
  }
  return `${lines.join("\n")}\n`;
}

/** `waymark review [--base-ref REF] [--files FILE...|-] [--json]`. */
export async function review(input: CommandInput): Promise<number> {
  if (input.args.length > 0) return input.usage();
  const files = await namedFiles(input.flags.files);
  const waymark = await openCore(input.options);
  try {
    const result = await getReviewInstructions(
      { store: waymark.store, schemas: waymark.schemas, handedOut: new Map() },
      {
        ws: gitWorkspace(waymark.paths.workspace),
        files,
        baseRef: input.flags["base-ref"],
      },
    );
    if (!result.ok) {
      printErr(`${result.error.message}\n`);
      return 1;
    }
    printOut(
      input.flags.json ? `${JSON.stringify(result.value, null, 2)}\n` : renderReview(result.value),
    );
    return result.value.errors.length > 0 ? 1 : 0;
  } finally {
    await waymark.close();
  }
}
