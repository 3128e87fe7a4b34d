/**
 * The error envelope on the wire: `isError: true`, a text rendering, and
 * `structuredContent.error = {code, message, retry, details?}`.
 * @module
 */
import { z } from "npm:zod@4.6.7";
import { type WaymarkError, waymarkErrorSchema } from "../../engine/model/result.ts";
import { renderError } from "../../engine/answers/text.ts";
import { formatPath } from "../../engine/common/issue_path.ts";

/** Schema of the error envelope, published inside every tool's output schema. */
export const errorEnvelopeSchema = z.object({ error: waymarkErrorSchema });

/** A tool result carrying an error. */
export interface ErrorResult {
  [key: string]: unknown;
  isError: true;
  content: { type: "text"; text: string }[];
  structuredContent: { error: WaymarkError };
}

/** Wraps an error as a tool result. */
export function errorResult(error: WaymarkError): ErrorResult {
  return {
    isError: true,
    content: [{ type: "text", text: renderError(error) }],
    structuredContent: { error },
  };
}

/** The error for arguments that fail a tool's input schema. */
export function invalidArguments(tool: string, issues: readonly z.core.$ZodIssue[]): WaymarkError {
  const listed = issues.slice(0, 10).map((i) => ({
    path: formatPath(i.path) || "(arguments)",
    message: i.message,
  }));
  return {
    code: "INVALID_ARGUMENTS",
    message: `Invalid arguments for ${tool}: ${
      listed.map((i) => `${i.path}: ${i.message}`).join("; ")
    }. Fix them to match the tool's input schema and call again.`,
    retry: { kind: "not_retryable" },
    details: { tool, issues: listed },
  };
}
