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
