/**
 * Text that is not UTF-8 never reaches the native binding as text: `libsql` panics converting
 * it (a Rust `unwrap`, which aborts the process: every reader, doctor included, died on one bad
 * title or a page of random bytes). A reading `SELECT` is prepared wrapped, so each text value
 * holding a byte outside ASCII comes back as its bytes (`CAST … AS BLOB`; waymark stores no
 * blobs) and is decoded here, strictly: text that is not UTF-8 is a
 * `StorageCorruptionError`, which names `waymark doctor` (it finds the row and `--repair` sets
 * it aside). ASCII text, the common case, is passed as it was; the check is one `GLOB` per value.
 * @module
 */
import type Database from "npm:libsql@0.5.29";
import { StorageCorruptionError } from "../../engine/result.ts";

type NativeDb = InstanceType<typeof Database>;
type NativeStatement = ReturnType<NativeDb["prepare"]>;

/** A text value with a byte outside ASCII (`\x01`-`\x7f`), in SQL (the characters are literal). */
export const NON_ASCII = "GLOB '*[^\x01-\x7f]*'";

/** Text longer than this (in bytes) comes back as bytes whatever it holds. */
const SCAN_LIMIT = 128;

const quoted = (name: string) => `"${name.replaceAll('"', '""')}"`;

/** A statement as prepared for reading: wrapped (its text decoded here) or as it was. */
export interface GuardedStatement {
  stmt: NativeStatement;
  reader: boolean;
  /** Whether its rows' bytes values are text to decode. */
  guarded: boolean;
}

/**
 * Prepares `sql`; a `SELECT` (or `WITH … SELECT`) whose columns have distinct names is wrapped
 * so that non-ASCII text comes back as bytes. Anything else (writes, `RETURNING`, pragmas) is
 * prepared as it is: what it returns was just written, or is the engine's own text.
 */
export function prepareGuarded(db: NativeDb, sql: string): GuardedStatement {
  const stmt = db.prepare(sql);
  if (!stmt.reader || !/^\s*(SELECT|WITH)\b/i.test(sql)) {
    return { stmt, reader: stmt.reader, guarded: false };
  }
  const names = (stmt.columns() as { name: string }[]).map((c) => c.name);
  if (new Set(names).size !== names.length) return { stmt, reader: true, guarded: false };
  // a long value is cheaper to decode here than to scan with GLOB (which costs per byte)
  const columns = names.map((n) =>
    `CASE WHEN typeof(${quoted(n)}) = 'text' AND (octet_length(${quoted(n)}) > ${SCAN_LIMIT} OR ${
      quoted(n)
    } ${NON_ASCII}) THEN CAST(${quoted(n)} AS BLOB) ELSE ${quoted(n)} END AS ${quoted(n)}`
  );
  const wrapped = db.prepare(`SELECT ${columns.join(", ")} FROM (${sql}\n)`);
  return { stmt: wrapped, reader: true, guarded: true };
}

const strict = new TextDecoder("utf-8", { fatal: true });

/** Rows of a guarded statement with their bytes decoded as UTF-8 text (refused when not). */
export function decodeRows(rows: unknown[]): unknown[] {
  for (const row of rows as Record<string, unknown>[]) {
    for (const [column, value] of Object.entries(row)) {
      // the binding answers bytes as an ArrayBuffer (a Buffer in some versions)
      const bytes = value instanceof ArrayBuffer
        ? new Uint8Array(value)
        : ArrayBuffer.isView(value)
        ? new Uint8Array(value.buffer, value.byteOffset, value.byteLength)
        : null;
      if (bytes === null) continue;
      try {
        row[column] = strict.decode(bytes);
      } catch {
        throw new StorageCorruptionError(
          `The database holds text that is not valid UTF-8 (column ${column} of a row this call read); \`waymark doctor\` names the row and \`waymark doctor --repair\` sets it aside`,
          null,
        );
      }
    }
  }
  return rows;
}
