/** @jsxImportSource npm:hono@4.13.19/jsx */
/**
 * The page for a miss (404) or a failure (500): a message and a way back to the list.
 * @module
 */
import type { FC } from "npm:hono@4.13.19/jsx";
import { type Html, Layout } from "../parts/shell.tsx";

/** A plain error page. */
export const ErrorPage: FC<{ status: number; message: string }> = (
  { status, message }: { status: number; message: string },
): Html => (
  <Layout title={`${status} · waymark`}>
    <section class="panel">
      <h1>{status === 404 ? "Not found" : "Something went wrong"}</h1>
      <p>{message}</p>
      <p>
        <a href="/">All sessions</a>
      </p>
    </section>
  </Layout>
);
