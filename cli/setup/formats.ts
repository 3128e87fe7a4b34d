/**
 * The configuration file formats MCP clients use, each able to read a file, put one server entry
 * into it leaving every other byte of the file alone where the format allows, and print the entry
 * alone. A file that does not parse is refused with where it is wrong.
 * @module
 */
import {
  applyEdits,
  modify,
  parse as parseJsonc,
  type ParseError,
  printParseErrorCode,
} from "npm:jsonc-parser@3.3.1";
import { parse as parseToml, stringify as stringifyToml } from "npm:smol-toml@1.9.1";

/** The formats by name. */
export type FormatName = "json" | "jsonc" | "toml";

/** A file's contents, parsed. */
export type Document = Record<string, unknown>;

/** One format. */
export interface Format {
  /** Parses a file's text (empty text is an empty document); throws {@linkcode Malformed}. */
  read(text: string): Document;
  /** The text with `document[key][name] = entry`, the rest of the text kept. */
  put(text: string, at: { key: string; name: string }, entry: Document): string;
  /** The entry alone, as the client's file would hold it. */
  snippet(at: { key: string; name: string }, entry: Document): string;
}

/** A file that does not parse: where and why. */
export class Malformed extends Error {}

function lineColumn(text: string, offset: number): string {
  const before = text.slice(0, offset).split("\n");
  return `line ${before.length}, column ${before.at(-1)!.length + 1}`;
}

function isObject(value: unknown): value is Document {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/** The indentation a JSON file already uses (two spaces when it shows none). */
function indentation(text: string): { insertSpaces: boolean; tabSize: number } {
  const indent = /^([ \t]+)["}\]]/m.exec(text)?.[1];
  if (indent?.startsWith("\t")) return { insertSpaces: false, tabSize: 1 };
  return { insertSpaces: true, tabSize: indent?.length ?? 2 };
}

function jsonFormat(options: { comments: boolean }): Format {
  return {
    read(text) {
      if (text.trim() === "") return {};
      const errors: ParseError[] = [];
      const value = parseJsonc(text, errors, {
        disallowComments: !options.comments,
        allowTrailingComma: options.comments,
        allowEmptyContent: false,
      });
      const [error] = errors;
      if (error) {
        throw new Malformed(
          `${printParseErrorCode(error.error)} at ${lineColumn(text, error.offset)}`,
        );
      }
      if (!isObject(value)) throw new Malformed("the file is not a JSON object");
      return value;
    },
    put(text, at, entry) {
      if (text.trim() === "") {
        return `${JSON.stringify({ [at.key]: { [at.name]: entry } }, null, 2)}\n`;
      }
      // inserted first, so no edit (and no reformatting) reaches the servers already there
      const edits = modify(text, [at.key, at.name], entry, {
        formattingOptions: indentation(text),
        getInsertionIndex: () => 0,
      });
      return applyEdits(text, edits);
    },
    snippet: (at, entry) => `${JSON.stringify({ [at.key]: { [at.name]: entry } }, null, 2)}\n`,
  };
}

/** The lines of a TOML table header naming `key.name` or a table inside it. */
function tableHeader(key: string, name: string): RegExp {
  const part = (word: string) => `(?:${word}|"${word}"|'${word}')`;
  return new RegExp(`^\\s*\\[\\s*${part(key)}\\s*\\.\\s*${part(name)}\\s*(?:\\]|\\.)`);
}

const TOML: Format = {
  read(text) {
    try {
      return parseToml(text) as Document;
    } catch (error) {
      const { line, column } = error as { line?: number; column?: number };
      const where = line ? ` (line ${line}, column ${column})` : "";
      throw new Malformed(`${(error as Error).message.split("\n")[0]}${where}`);
    }
  },
  put(text, at, entry) {
    // the entry's own tables are cut out where they stand and the new one written at the end;
    // every other line stays as it was
    const header = tableHeader(at.key, at.name);
    const lines = text.split("\n");
    const kept: string[] = [];
    let inEntry = false;
    for (const line of lines) {
      if (/^\s*\[/.test(line)) inEntry = header.test(line);
      if (!inEntry) kept.push(line);
    }
    const rest = kept.join("\n").replace(/\n*$/, "");
    return `${rest}${rest === "" ? "" : "\n\n"}${TOML.snippet(at, entry)}`;
  },
  snippet: (at, entry) => `${stringifyToml({ [at.key]: { [at.name]: entry } })}\n`,
};

/** The formats. */
export const FORMATS: Record<FormatName, Format> = {
  json: jsonFormat({ comments: false }),
  jsonc: jsonFormat({ comments: true }),
  toml: TOML,
};
