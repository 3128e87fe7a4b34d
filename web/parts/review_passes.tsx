/** @jsxImportSource npm:hono@4.13.19/jsx */
/**
 * The session page's "Review passes": the reviews marked as passed in a workspace's reviews
 * session (`mark_review_as_passed`), newest first, each with its rule, its files and the
 * content hash that passed. Everything shown is escaped text.
 * @module
 */
import type { FC } from "npm:hono@4.13.19/jsx";
import type { ReviewPassRow } from "../queries.ts";
import { fmtTime } from "./display_text.ts";
import type { Html } from "./shell.tsx";

/** Props of {@linkcode ReviewPasses}. */
export type ReviewPassesProps = { passes: ReviewPassRow[] };

/** The review passes panel (nothing when the session has none). */
export const ReviewPasses: FC<ReviewPassesProps> = ({ passes }: ReviewPassesProps): Html =>
  passes.length === 0 ? null : (
    <section class="panel" id="review-passes" data-live="1">
      <h2>
        Review passes{" "}
        <span class="muted small">not handed out again until one of their files changes</span>
      </h2>
      <ul class="note-list">
        {passes.map((p) => (
          <li class="review-pass">
            <div class="small">
              <strong>{p.rule}</strong> · <span class="mono">{p.reviewId}</span> ·{" "}
              {fmtTime(p.createdAt)}
              {p.principal ? ` · by ${p.principal}` : ""}
            </div>
            <ul>
              {p.files.map((f) => (
                <li class="small">
                  <span class="mono">{f.path}</span>{" "}
                  <span class="muted mono">sha256 {f.sha256.slice(0, 12)}</span>
                </li>
              ))}
            </ul>
          </li>
        ))}
      </ul>
    </section>
  );
