/**
 * The house's size rules, measured with Deno's own parser (a lint plugin run through
 * `Deno.lint.runPlugin`, available under `deno test`): no function over 80 lines, no file over
 * 500. A function is a declaration, an expression (a method's body included) or an arrow, counted
 * from its first line to its last, so a nested function counts inside its parent too.
 * @module
 */

/** The longest a function may be, in lines. */
export const MAX_FUNCTION_LINES = 80;
/** The longest a file may be, in lines. */
export const MAX_FILE_LINES = 500;

/** The product's code: everything but the tests. */
export const PRODUCT_CODE = [
  "engine",
  "store",
  "tools",
  "web",
  "cli",
  "config",
  "scripts",
  "workflows",
  "main.ts",
  "mod.ts",
  "lazy.ts",
  "build.ts",
  "version.ts",
] as const;

const lineOf = (text: string, offset: number) => text.slice(0, offset).split("\n").length;

const plugin: Deno.lint.Plugin = {
  name: "size",
  rules: {
    function: {
      create(context) {
        const check = (node: Deno.lint.Node) => {
          const text = context.sourceCode.text;
          const [start, end] = node.range;
          const lines = lineOf(text, end) - lineOf(text, start) + 1;
          if (lines > MAX_FUNCTION_LINES) {
            context.report({ node, message: `${lineOf(text, start)}: ${lines} lines` });
          }
        };
        return {
          FunctionDeclaration: check,
          FunctionExpression: check,
          ArrowFunctionExpression: check,
        };
      },
    },
  },
};

/** Each function of `text` over the limit, as `file:line: N lines`; then the file's own size. */
export function oversized(file: string, text: string): string[] {
  const found = Deno.lint.runPlugin(plugin, file, text).map((d) => `${file}:${d.message}`);
  const lines = text.split("\n").length - (text.endsWith("\n") ? 1 : 0);
  if (lines > MAX_FILE_LINES) found.push(`${file}: the file has ${lines} lines`);
  return found;
}
