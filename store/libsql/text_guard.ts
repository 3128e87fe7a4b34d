/**
 * Text that is not UTF-8 never reaches the native binding as text: `libsql` panics converting
 * it (a Rust `unwrap`, which aborts the process: every reader, doctor included, died on one bad
 * title or a page of random bytes). A reading `SELECT` is prepared wrapped so that each row
 * comes back as one value of bytes, the JSON array of its columns (`json_array`, which copies
 * text bytes as they are), decoded here strictly and parsed: text that is not UTF-8 is a
 * `StorageCorruptionError`, which names `waymark doctor` (it finds the row and `--repair` sets
 * it aside). One strict decode and one `JSON.parse` per row cost about what the binding's own
 * conversion of each column does; checking each value in SQL (a `GLOB` per column) had cost
 * an advance about 0.1 ms and a rehydrate 0.2 ms.
 *
 * A statement is read again with every text or blob value cast to bytes and decoded one by
 * one, as text, when one of its rows is large (over 8 KB: escaping it into JSON and parsing it
 * back would cost more than its bytes), or not UTF-8 (so the error names the column), or holds
 * a blob (JSON holds no bytes; waymark stores none, so only damage puts one there). JSON
 * renders a real number to 15 digits; the store reads no real values (its columns are text and
 * integers).
 * @module
 */
import type Database from "npm:libsql@0.5.29";
import { StorageCorruptionError } from "../../engine/model/result.ts";

type NativeDb = InstanceType<typeof Database>;
type NativeStatement = ReturnType<NativeDb["prepare"]>;

/** A text value with a byte outside ASCII (`\x01`-`\x7f`), in SQL (the characters are literal). */
export const NON_ASCII = "GLOB '*[^\x01-\x7f]*'";

/** Bytes of a row's values above which it is read value by value rather than as JSON. */
const JSON_ROW_LIMIT = 8_192;

const quoted = (name: string) => `"${name.replaceAll('"', '""')}"`;

/** A statement as prepared: `rows` reads it, with its text checked when it was wrapped. */
export interface GuardedStatement {
  stmt: NativeStatement;
  reader: boolean;
  /** A reader's rows by column name. */
  rows(params: unknown[]): Record<string, unknown>[];
}

/**
 * Prepares `sql`; a `SELECT` (or `WITH … SELECT`) whose columns have distinct names is wrapped
 * so that its rows come back as checked bytes. Anything else (writes, `RETURNING`, pragmas) is
 * prepared as it is: what it returns was just written, or is the engine's own text.
 */
export function prepareGuarded(db: NativeDb, sql: string): GuardedStatement {
  const stmt = db.prepare(sql);
  const plain = {
    stmt,
    reader: stmt.reader,
    rows: (params: unknown[]) => stmt.all(params) as Record<string, unknown>[],
  };
  if (!stmt.reader || !/^\s*(SELECT|WITH)\b/i.test(sql)) return plain;
  const names = (stmt.columns() as { name: string }[]).map((c) => c.name);
  if (new Set(names).size !== names.length) return plain;
  const from = `FROM (${sql}\n)`;
  // a large row (a compiled workflow) is read value by value: escaped into JSON and parsed
  // back, 200 KB cost four times what decoding its bytes does
  const size = names.map((n) => `ifnull(octet_length(${quoted(n)}), 0)`).join(" + ");
  const wrapped = db.prepare(
    `SELECT CASE WHEN ${size} > ${JSON_ROW_LIMIT} THEN NULL ELSE CAST(json_array(${
      names.map(quoted).join(", ")
    }) AS BLOB) END ${from}`,
  ).raw(true);
  let bytewise: NativeStatement | undefined;
  const byValue = () =>
    bytewise ??= db.prepare(
      `SELECT ${
        names.map((n) =>
          `CASE WHEN typeof(${quoted(n)}) IN ('text', 'blob') THEN CAST(${
            quoted(n)
          } AS BLOB) ELSE ${quoted(n)} END AS ${quoted(n)}`
        ).join(", ")
      } ${from}`,
    );
  return {
    stmt: wrapped,
    reader: true,
    rows(params) {
      let rows: unknown[][];
      try {
        rows = wrapped.all(params) as unknown[][];
      } catch (error) {
        if (!/JSON cannot hold BLOB values/.test(String(error))) throw error;
        return decodeValues(byValue().all(params) as Record<string, unknown>[]);
      }
      const out: Record<string, unknown>[] = [];
      for (const [bytes] of rows) {
        // a large row, or one that is not UTF-8 (read again to name its column): value by value
        const text = bytes === null ? null : utf8(bytes);
        if (text === null) return decodeValues(byValue().all(params) as Record<string, unknown>[]);
        out.push(rowOf(names, JSON.parse(text)));
      }
      return out;
    },
  };
}

const strict = new TextDecoder("utf-8", { fatal: true });

/** `bytes` (an ArrayBuffer, or a Buffer in some binding versions) as UTF-8, or null. */
function utf8(bytes: unknown): string | null {
  try {
    // a view over the same memory (no copy); typed so both Deno's and Node's DOM types accept it
    return strict.decode(
      bytes instanceof Uint8Array ? bytes : new Uint8Array(bytes as ArrayBuffer),
    );
  } catch {
    return null;
  }
}

function rowOf(names: readonly string[], values: unknown[]): Record<string, unknown> {
  const row: Record<string, unknown> = {};
  for (let i = 0; i < names.length; i++) row[names[i]!] = values[i];
  return row;
}

/** Rows whose every text or blob value came back as bytes, decoded as UTF-8 (refused when not). */
function decodeValues(rows: Record<string, unknown>[]): Record<string, unknown>[] {
  for (const row of rows) {
    for (const [column, value] of Object.entries(row)) {
      if (!(value instanceof ArrayBuffer || ArrayBuffer.isView(value))) continue;
      const text = utf8(value);
      if (text === null) {
        throw new StorageCorruptionError(
          `The database holds text that is not valid UTF-8 (column ${column} of a row this call read); \`waymark doctor\` names the row and \`waymark doctor --repair\` sets it aside`,
          null,
        );
      }
      row[column] = text;
    }
  }
  return rows;
}
