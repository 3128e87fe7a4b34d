/** @jsxImportSource npm:hono@4.13.19/jsx */
/**
 * A step's diff: the unified diff a snapshot recorded, parsed by jsdiff (`parsePatch`) into files
 * and hunks and drawn as a table with old and new line numbers. Every byte of it was written by an
 * agent, so it goes through JSX's escaping only (never raw HTML). A file whose part of the diff
 * does not parse (the last one, when the diff was cut) is drawn line by line as it is.
 * @module
 */
import type { FC } from "npm:hono@4.13.19/jsx";
import { parsePatch } from "npm:diff@9.0.0";
import type { Html } from "./shell.tsx";

/** One file of a diff, parsed or left as lines. */
export interface DiffFile {
  /** The path shown (the new name, or the old one for a deletion). */
  path: string;
  /** `added`, `deleted`, `modified`, `binary` or `unparsed`. */
  status: string;
  /** Rows: a hunk header, or a line with its numbers. */
  rows: DiffRow[];
}

/** A row of the drawn diff. */
export interface DiffRow {
  /** `hunk`, `add`, `del`, `ctx` or `note` (a "no newline" marker, a line that is none of these). */
  type: "hunk" | "add" | "del" | "ctx" | "note";
  /** Line number in the old file. */
  old: number | null;
  /** Line number in the new file. */
  new: number | null;
  /** The line without its marker. */
  text: string;
}

const stripPrefix = (name: string | undefined) =>
  !name || name === "/dev/null" ? null : name.replace(/^[ab]\//, "");

/** Splits a unified diff into each file's part (at `diff --git` lines). */
function fileParts(diff: string): string[] {
  const parts: string[] = [];
  let current: string[] = [];
  for (const line of diff.split("\n")) {
    if (line.startsWith("diff --git ") && current.length > 0) {
      parts.push(current.join("\n"));
      current = [];
    }
    current.push(line);
  }
  if (current.some((l) => l !== "")) parts.push(current.join("\n"));
  return parts;
}

function rowsOf(hunks: { oldStart: number; newStart: number; lines: string[] }[]): DiffRow[] {
  const rows: DiffRow[] = [];
  for (const hunk of hunks) {
    let o = hunk.oldStart;
    let n = hunk.newStart;
    rows.push({ type: "hunk", old: null, new: null, text: `@@ -${o} +${n} @@` });
    for (const line of hunk.lines) {
      const mark = line[0];
      const text = line.slice(1);
      if (mark === "+") rows.push({ type: "add", old: null, new: n++, text });
      else if (mark === "-") rows.push({ type: "del", old: o++, new: null, text });
      else if (mark === " ") rows.push({ type: "ctx", old: o++, new: n++, text });
      else rows.push({ type: "note", old: null, new: null, text: line });
    }
  }
  return rows;
}

/** A part that did not parse, as lines classified by their first character. */
function unparsed(part: string): DiffFile {
  const lines = part.split("\n");
  const path = /^diff --git a\/(.*?) b\//.exec(lines[0] ?? "")?.[1] ?? "(diff)";
  const rows = lines.filter((l) => l !== "").map((line): DiffRow => {
    const type = line.startsWith("+++") || line.startsWith("---")
      ? "note"
      : line[0] === "+"
      ? "add"
      : line[0] === "-"
      ? "del"
      : line.startsWith("@@")
      ? "hunk"
      : "note";
    return {
      type,
      old: null,
      new: null,
      text: type === "add" || type === "del" ? line.slice(1) : line,
    };
  });
  return { path, status: "unparsed", rows };
}

/** The files of a unified diff, in order. */
export function parseDiff(diff: string): DiffFile[] {
  return fileParts(diff).flatMap((part): DiffFile[] => {
    try {
      return parsePatch(part).map((p) => {
        const file = p as typeof p & { isCreate?: boolean; isDelete?: boolean; isBinary?: boolean };
        return {
          path: stripPrefix(p.newFileName) ?? stripPrefix(p.oldFileName) ?? "(unnamed)",
          status: file.isBinary
            ? "binary"
            : file.isCreate
            ? "added"
            : file.isDelete
            ? "deleted"
            : "modified",
          rows: rowsOf(p.hunks),
        };
      });
    } catch {
      return [unparsed(part)];
    }
  });
}

const num = (n: number | null) => (n === null ? "" : String(n));

/** One file's table. */
const FileDiff: FC<{ file: DiffFile }> = ({ file }) => (
  <details class="diff-file" open>
    <summary>
      <span class={`badge diff-${file.status}`}>{file.status}</span> <code>{file.path}</code>
    </summary>
    {file.rows.length === 0
      ? <p class="muted small">No text lines to show (binary, or a mode change).</p>
      : (
        <table class="diff">
          <tbody>
            {file.rows.map((r) => (
              <tr class={`d-${r.type}`}>
                <td class="ln">{num(r.old)}</td>
                <td class="ln">{num(r.new)}</td>
                <td class="dm">{r.type === "add" ? "+" : r.type === "del" ? "-" : " "}</td>
                <td class="dt">{r.text}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
  </details>
);

/** A step's diff, file by file, with the marker where it was cut. */
export const DiffView: FC<{ diff: string; truncated: boolean }> = (
  { diff, truncated }: { diff: string; truncated: boolean },
): Html => {
  // the snapshot ends a cut diff with its own marker line: shown as the marker, not as a file
  const marker = /\n?(\[diff truncated:[^\n]*\])\s*$/.exec(diff);
  const files = parseDiff(marker ? diff.slice(0, marker.index) : diff);
  return (
    <div class="diff-view">
      {files.map((f, i) => <FileDiff key={i} file={f} />)}
      {files.length === 0 && !truncated ? <p class="muted small">No text changes.</p> : null}
      {truncated
        ? (
          <p class="trunc diff-cut">
            {marker?.[1] ?? "[diff truncated: see the file list for every change]"}
          </p>
        )
        : null}
    </div>
  );
};
