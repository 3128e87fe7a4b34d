/**
 * The stylesheet, the script and the icon, embedded at build time: nothing is read from disk.
 * @module
 */
import { type Context, Hono } from "npm:hono@4.13.19";
import css from "../assets/style.css" with { type: "text" };
import script from "../assets/app.js" with { type: "text" };

const ICON =
  `<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 20 20"><path d="M4 3v14M4 7c0 3 8 2 8 6v4" fill="none" stroke="#2458d6" stroke-width="2"/><circle cx="4" cy="4" r="2.6" fill="#2458d6"/><circle cx="4" cy="16" r="2.6" fill="#2458d6"/><circle cx="12" cy="16" r="2.6" fill="#fff" stroke="#c2410c" stroke-width="2"/></svg>`;

const asset = (body: string, type: string) => (c: Context) =>
  c.body(body, 200, { "content-type": type, "cache-control": "no-cache" });

/** `/assets/style.css`, `/assets/app.js`, `/assets/icon.svg` and `/favicon.ico`. */
export function assetRoutes(): Hono {
  const app = new Hono();
  app.get("/assets/style.css", asset(css, "text/css; charset=utf-8"));
  app.get("/assets/app.js", asset(script, "text/javascript; charset=utf-8"));
  app.get("/assets/icon.svg", asset(ICON, "image/svg+xml"));
  app.get("/favicon.ico", asset(ICON, "image/svg+xml"));
  return app;
}
