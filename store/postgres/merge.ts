/**
 * Writes sent ahead in a transaction, merged into one statement: each becomes a data-modifying
 * `WITH` of the next, so the server starts one executor and answers one message where it did
 * several (an advance's projections: the node, the run's count, the edge, the output, its
 * search rows, the attempt). The statements themselves stay where they are written; only their
 * text is joined here.
 *
 * PostgreSQL runs every part of such a statement on the same snapshot: no part sees another's
 * rows, and a row two parts change is changed by one of them only. So a write joins the
 * statement being built only when no table it names is named by a write already in it (each
 * part reads and writes tables of its own, as it did alone); otherwise, or when its text has a
 * literal (whose `$` could not be told from a parameter's), the statement is closed and the write
 * begins the next. Foreign keys are checked at the statement's end, after every part.
 * @module
 */

/** A write to send: its text and parameters. */
export interface Write {
  sql: string;
  parameters: readonly unknown[];
}

/** A write's leading `WITH` parts (`name as (…)`) and the statement after them. */
interface Parts {
  ctes: string[];
  names: string[];
  main: string;
}

/** The index just past the parenthesis that closes the one at `open`, or -1. */
function closing(text: string, open: number): number {
  let depth = 0;
  for (let i = open; i < text.length; i++) {
    if (text[i] === "(") depth++;
    else if (text[i] === ")" && --depth === 0) return i + 1;
  }
  return -1;
}

const CTE_HEAD = /^\s*("[^"]+"|[a-z_][a-z0-9_]*)\s+as\s+\(/i;

/** Splits `with a as (…), b as (…) main` into its parts (undefined when it cannot). */
function split(text: string): Parts | undefined {
  if (!/^with\s/i.test(text)) return { ctes: [], names: [], main: text };
  if (/^with\s+recursive\s/i.test(text)) return undefined;
  const ctes: string[] = [];
  const names: string[] = [];
  let at = 4;
  for (;;) {
    const head = CTE_HEAD.exec(text.slice(at));
    if (!head) return undefined;
    const end = closing(text, at + head[0].length - 1);
    if (end < 0) return undefined;
    ctes.push(text.slice(at, end).trim());
    names.push(head[1].replaceAll('"', "").toLowerCase());
    at = end;
    const comma = /^\s*,/.exec(text.slice(at));
    if (!comma) break;
    at += comma[0].length;
  }
  return { ctes, names, main: text.slice(at).trim() };
}

const NAME = String.raw`(?:"[^"]+"|[a-z_][a-z0-9_]*)`;
const TABLE = new RegExp(
  String.raw`\b(?:into|update|from|join|using)\s+(${NAME}(?:\.${NAME})?)`,
  "gi",
);

/** The tables a write names (after `into`, `update`, `from`, `join`, `using`; schema dropped). */
function tablesOf(text: string): string[] {
  return [...text.matchAll(TABLE)].map((m) =>
    m[1].split(".").at(-1)!.replaceAll('"', "").toLowerCase()
  );
}

/** Shifts a text's `$n` parameters by `by`. */
function shift(text: string, by: number): string {
  return by === 0 ? text : text.replace(/\$(\d+)/g, (_, n) => `$${Number(n) + by}`);
}

/** A write that may be merged: a plain insert, update or delete (with `WITH`s) and no literal. */
function mergeable(write: Write): Parts | undefined {
  if (write.sql.includes("'") || /\breturning\b/i.test(write.sql)) return undefined;
  const parts = split(write.sql);
  if (!parts || !/^(insert|update|delete)\s/i.test(parts.main)) return undefined;
  return parts;
}

/** One statement built from writes. */
class Merged {
  readonly #ctes: string[] = [];
  readonly #names = new Set<string>();
  readonly #tables = new Set<string>();
  readonly #parameters: unknown[] = [];
  #main = "";
  #count = 0;
  #single: Write | undefined;

  /** Adds `write` when it can join; false when it cannot. */
  add(write: Write, parts: Parts | undefined): boolean {
    if (this.#count === 0) {
      this.#take(write, parts);
      return true;
    }
    if (!parts || !this.#mergeable) return false;
    const tables = tablesOf(write.sql);
    if (tables.some((t) => this.#tables.has(t))) return false;
    if (parts.names.some((n) => this.#names.has(n) || /^waymark_w\d+$/.test(n))) return false;
    this.#take(write, parts);
    return true;
  }

  get #mergeable(): boolean {
    return this.#single === undefined;
  }

  #take(write: Write, parts: Parts | undefined): void {
    this.#count++;
    if (!parts) {
      this.#single = write;
      return;
    }
    for (const t of tablesOf(write.sql)) this.#tables.add(t);
    for (const n of parts.names) this.#names.add(n);
    const by = this.#parameters.length;
    this.#parameters.push(...write.parameters);
    if (this.#main) this.#ctes.push(`waymark_w${this.#count - 1} as (${this.#main})`);
    for (const cte of parts.ctes) this.#ctes.push(shift(cte, by));
    this.#main = shift(parts.main, by);
  }

  /** The statement. */
  write(): Write {
    if (this.#single) return this.#single;
    const text = this.#ctes.length > 0 ? `with ${this.#ctes.join(", ")} ${this.#main}` : this.#main;
    return { sql: text, parameters: this.#parameters };
  }
}

/** Statements built for a sequence of texts: each statement's text and how many writes it takes. */
type Plan = { sql: string; count: number }[];

/** Most sequences whose plan is kept (an advance repeats the same few). */
const MAX_PLANS = 256;
const plans = new Map<string, Plan>();

/** The plan for `writes`' texts, built by `Merged`. */
function planOf(writes: readonly Write[]): Plan {
  const key = writes.map((w) => w.sql).join("\u0000");
  const kept = plans.get(key);
  if (kept) return kept;
  const plan: Plan = [];
  let merged = new Merged();
  let count = 0;
  for (const write of writes) {
    const parts = mergeable(write);
    if (!merged.add(write, parts)) {
      plan.push({ sql: merged.write().sql, count });
      merged = new Merged();
      merged.add(write, parts);
      count = 0;
    }
    count++;
  }
  plan.push({ sql: merged.write().sql, count });
  if (plans.size < MAX_PLANS) plans.set(key, plan);
  return plan;
}

/**
 * `writes` as few statements as keep their meaning, in their order: consecutive writes that
 * name no table in common, none with a literal, are merged (see the module's note).
 */
export function mergeWrites(writes: readonly Write[]): Write[] {
  if (writes.length < 2) return [...writes];
  const out: Write[] = [];
  let at = 0;
  for (const { sql, count } of planOf(writes)) {
    const taken = writes.slice(at, at + count);
    at += count;
    out.push({
      sql,
      parameters: count === 1 ? taken[0].parameters : taken.flatMap((w) => w.parameters),
    });
  }
  return out;
}
