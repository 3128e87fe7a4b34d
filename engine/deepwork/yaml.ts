/**
 * The YAML parser, loaded on first use: only DeepWork job files and their outputs are YAML, and
 * the `yaml` package is one of the larger modules waymark loads (a server that never meets a
 * job never loads it).
 * @module
 */

/** Parses YAML text (JSON is YAML too); throws on a syntax error. */
export type YamlParse = (text: string) => unknown;

let parser: Promise<YamlParse> | undefined;

/** The parser, loading the package the first time. */
export function yamlParser(): Promise<YamlParse> {
  return parser ??= import("npm:yaml@2.9.1").then((yaml) => (text: string) => yaml.parse(text));
}

/** A parsed YAML document: its value, and the line (from 1) where a key or item of it starts. */
export interface YamlWithLines {
  /** The document as plain data. */
  value: unknown;
  /** The line of the key (or list item) at `path`, else of its nearest ancestor; 1 at worst. */
  lineOf(path: readonly PropertyKey[]): number;
}

/** Parses YAML keeping positions; throws on a syntax error with `line N` in its message. */
export type YamlParseWithLines = (text: string) => YamlWithLines;

let linedParser: Promise<YamlParseWithLines> | undefined;

/** The parser that keeps lines (rule files name the line of each problem), loaded once. */
export function yamlLinedParser(): Promise<YamlParseWithLines> {
  return linedParser ??= import("npm:yaml@2.9.1").then((yaml) => (text: string) => {
    const counter = new yaml.LineCounter();
    const doc = yaml.parseDocument(text, { lineCounter: counter, prettyErrors: true });
    if (doc.errors.length > 0) throw doc.errors[0];
    const line = (offset: number | undefined) =>
      offset === undefined ? null : counter.linePos(offset).line;
    const keyLine = (path: readonly PropertyKey[]): number | null => {
      let node: unknown = doc.contents;
      let found: number | null = line((node as { range?: number[] } | null)?.range?.[0]);
      for (const key of path) {
        if (yaml.isMap(node)) {
          const pair = node.items.find((p) => yaml.isScalar(p.key) && p.key.value === key);
          if (!pair) return found;
          found = line((pair.key as { range?: number[] }).range?.[0]) ?? found;
          node = pair.value;
        } else if (yaml.isSeq(node) && typeof key === "number") {
          node = node.items[key];
          found = line((node as { range?: number[] } | undefined)?.range?.[0]) ?? found;
        } else return found;
      }
      return found;
    };
    return { value: doc.toJS(), lineOf: (path) => keyLine(path) ?? 1 };
  });
}
