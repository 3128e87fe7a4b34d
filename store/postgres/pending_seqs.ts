/**
 * Sequence numbers still pending where a statement binds them: PostgreSQL's append
 * (`append.ts`) keeps the numbers it gave in the transaction's setting `waymark.seqs` instead of
 * answering them, and a statement made after it that binds a `PendingSeq` reads its number
 * from there, where it runs.
 * @module
 */
import { PendingSeq } from "../sql/dialect.ts";

/** What a `PendingSeq` bound at `$n` reads instead. */
const pendingText = (n: number) =>
  `(split_part(current_setting('waymark.seqs'), ',', $${n}::integer)::integer)`;

/** Texts with pending numbers put in, by text and the parameters that were pending. */
const MAX_REWRITTEN = 256;
const rewritten = new Map<string, string>();

/**
 * A statement's text and parameters with every `PendingSeq` parameter read from the append's
 * setting (its place in the batch bound instead), or both as they were when it has none.
 */
export function seqParameters(
  text: string,
  parameters: readonly unknown[],
): { text: string; parameters: readonly unknown[] } {
  let pending: number[] | undefined;
  for (let i = 0; i < parameters.length; i++) {
    if (parameters[i] instanceof PendingSeq) (pending ??= []).push(i + 1);
  }
  if (!pending) return { text, parameters };
  const key = `${pending.join(",")}\u0000${text}`;
  let out = rewritten.get(key);
  if (out === undefined) {
    const at = new Set(pending);
    out = text.replace(/\$(\d+)\b/g, (all, n) => at.has(Number(n)) ? pendingText(Number(n)) : all);
    if (rewritten.size < MAX_REWRITTEN) rewritten.set(key, out);
  }
  const values = parameters.map((p) => p instanceof PendingSeq ? p.index : p);
  return { text: out, parameters: values };
}
