/**
 * The viewer's guards, as Hono middleware, in the order the app applies them: a `Host` and
 * `Origin` allowlist (403; this defeats DNS rebinding and cross-site reads), GET/HEAD only
 * (405), then a strict CSP and the usual hardening headers on every response.
 * @module
 */
import type { MiddlewareHandler } from "npm:hono@4.13.19";
import { secureHeaders } from "npm:hono@4.13.19/secure-headers";

const CSP_DIRECTIVES = {
  defaultSrc: ["'none'"],
  scriptSrc: ["'self'"],
  styleSrc: ["'self'"],
  imgSrc: ["'self'", "data:"],
  connectSrc: ["'self'"],
  baseUri: ["'none'"],
  formAction: ["'self'"],
  frameAncestors: ["'none'"],
};

/** The Content-Security-Policy every response carries. */
export const CSP: string = Object.entries(CSP_DIRECTIVES)
  .map(([name, values]) => [name.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`), ...values])
  .map((words) => words.join(" "))
  .join("; ");

/** The `Host` values a viewer on `port` answers to. */
export function allowedHostsFor(port: number): string[] {
  return [`127.0.0.1:${port}`, `localhost:${port}`, `[::1]:${port}`];
}

/**
 * Refuses (403) a request whose `Host` is not one of `allowedHosts()` (case-insensitive) or whose
 * `Origin`, when present, is not `http://` one of them.
 */
export function loopbackOnly(allowedHosts: () => readonly string[]): MiddlewareHandler {
  return async (c, next) => {
    const allowed = allowedHosts().map((h) => h.toLowerCase());
    const host = (c.req.header("host") ?? new URL(c.req.url).host).toLowerCase();
    if (!allowed.includes(host)) {
      return c.text(
        "403 Forbidden: this viewer answers to 127.0.0.1, localhost and [::1] only.\n",
        403,
      );
    }
    const origin = c.req.header("origin");
    if (origin !== undefined && !allowed.some((h) => origin.toLowerCase() === `http://${h}`)) {
      return c.text("403 Forbidden: cross-origin requests are refused.\n", 403);
    }
    await next();
  };
}

/** Refuses (405) any method but GET and HEAD: nothing in the viewer writes. */
export function readOnly(): MiddlewareHandler {
  return async (c, next) => {
    if (c.req.method !== "GET" && c.req.method !== "HEAD") {
      return c.text("405 Method Not Allowed: the viewer is read-only.\n", 405, {
        allow: "GET, HEAD",
      });
    }
    await next();
  };
}

/** {@linkcode CSP}, the hardening headers, and `cache-control: no-store` unless a route set one. */
export function hardening(): MiddlewareHandler[] {
  return [
    secureHeaders({
      contentSecurityPolicy: CSP_DIRECTIVES,
      referrerPolicy: "no-referrer",
      xContentTypeOptions: "nosniff",
      xFrameOptions: "DENY",
      crossOriginResourcePolicy: "same-origin",
      crossOriginOpenerPolicy: "same-origin",
      strictTransportSecurity: false,
    }),
    async (c, next) => {
      await next();
      if (!c.res.headers.has("cache-control")) c.res.headers.set("cache-control", "no-store");
    },
  ];
}
