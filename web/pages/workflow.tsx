/** @jsxImportSource npm:hono@4.13.19/jsx */
/**
 * A pinned workflow's page (`/workflows/sha256:…`): what runs were pinned to, drawn as a graph
 * (the one `workflows inspect --graph` prints as Mermaid, which is shown too, to copy).
 * @module
 */
import type { FC } from "npm:hono@4.13.19/jsx";
import { mermaidFlowchart, workflowGraph } from "../../engine/authoring/graph.ts";
import type { Pinned } from "../model.ts";
import { shortHash } from "../parts/display_text.ts";
import { type Html, Layout } from "../parts/shell.tsx";
import { WorkflowGraphSvg } from "../parts/workflow_graph.tsx";

/** The page of the workflow pinned under `hash`. */
export const WorkflowPage: FC<{ pinned: Pinned; hash: string }> = (
  { pinned, hash }: { pinned: Pinned; hash: string },
): Html => {
  const c = pinned.compiled;
  const graph = workflowGraph(c);
  return (
    <Layout
      title={`${c.name} · waymark`}
      crumbs={<span class="mono">{c.id} · {shortHash(hash)}</span>}
    >
      <section class="panel" id="workflow-page">
        <h1>
          {c.name} <span class="mono small">{c.id}</span>
          <span class="muted small">v{c.version} · {shortHash(hash)}</span>
        </h1>
        <p class="muted small">{c.description.split("\n")[0]}</p>
        <WorkflowGraphSvg graph={graph} />
        <details>
          <summary>Mermaid (as `waymark workflows inspect {c.id} --graph` prints it)</summary>
          <pre class="mono small" id="mermaid">{mermaidFlowchart(graph)}</pre>
        </details>
      </section>
    </Layout>
  );
};
