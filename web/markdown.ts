/**
 * Markdown that an agent (or a workflow author) wrote, rendered safely: `markdown-it` with raw
 * HTML off (every tag is escaped as text), its link validator (refuses `javascript:`,
 * `vbscript:`, `file:` and `data:` links), images off (no remote fetches, no tracking pixels),
 * and `rel="noopener noreferrer nofollow"` on every link.
 * @module
 */
import MarkdownIt from "npm:markdown-it@15.0.3";

const md = new MarkdownIt({ html: false, linkify: true, typographer: false });
md.disable(["image"]);

type Renderer = NonNullable<typeof md.renderer.rules.link_open>;
const defaultLinkOpen: Renderer = md.renderer.rules.link_open ??
  ((tokens, idx, options, _env, self) => self.renderToken(tokens, idx, options));

md.renderer.rules.link_open = (tokens, idx, options, env, self) => {
  const token = tokens[idx]!;
  token.attrSet("rel", "noopener noreferrer nofollow");
  return defaultLinkOpen(tokens, idx, options, env, self);
};

/** Renders Markdown to sanitised HTML. */
export function renderMarkdown(text: string): string {
  return md.render(text);
}

/** The length beyond which notes are cut before rendering, to keep a page bounded. */
export const MAX_MARKDOWN_CHARS = 200_000;

/** Renders Markdown, cutting very long text first (and saying so). */
export function renderMarkdownBounded(text: string, max: number = MAX_MARKDOWN_CHARS): string {
  if (text.length <= max) return renderMarkdown(text);
  return `${renderMarkdown(text.slice(0, max))}<p class="muted">… ${
    (text.length - max).toLocaleString("en-US")
  } more characters not shown; see the JSON API or the Markdown export.</p>`;
}
