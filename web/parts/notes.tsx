/** @jsxImportSource npm:hono@4.13.19/jsx */
/**
 * What agents wrote, shown safely: Markdown notes through the sanitising renderer (the only
 * `raw()` of agent text in the viewer) and artifacts as bounded JSON.
 * @module
 */
import type { FC } from "npm:hono@4.13.19/jsx";
import { raw } from "npm:hono@4.13.19/html";
import { renderMarkdownBounded } from "../markdown.ts";
import { json } from "./display_text.ts";
import type { Html } from "./shell.tsx";

/** Agent-written Markdown, sanitised and bounded. */
export const Markdown: FC<{ text: string }> = ({ text }: { text: string }): Html => (
  <div class="md">{raw(renderMarkdownBounded(text))}</div>
);

/** Artifacts as JSON, each under its `kind` (or "artifact"). */
export const Artifacts: FC<{ artifacts: unknown[] }> = (
  { artifacts }: { artifacts: unknown[] },
): Html => (
  <ul class="artifacts">
    {artifacts.map((a) => {
      const kind = a && typeof a === "object" && "kind" in a
        ? String((a as { kind: unknown }).kind)
        : "artifact";
      return (
        <li>
          <div class="kind">{kind}</div>
          <pre class="json">{json(a)}</pre>
        </li>
      );
    })}
  </ul>
);
