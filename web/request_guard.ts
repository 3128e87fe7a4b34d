/**
 * The guards both HTTP servers (the viewer and the MCP endpoint) share, as Hono middleware:
 * the hardening headers (a strict CSP, `nosniff`, ...) on every response, refusals included;
 * a `Host` and `Origin` allowlist (403; this defeats DNS rebinding and cross-site reads; a
 * request without `Host` is refused too); and, for the viewer, GET/HEAD only (405).
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

/** The `Host` values a server on loopback `port` answers to (also the bare names on port 80). */
export function allowedHostsFor(port: number): string[] {
  const names = ["127.0.0.1", "localhost", "[::1]"];
  return [...names.map((h) => `${h}:${port}`), ...(port === 80 ? names : [])];
}

/** Whether a `Host` header is one of `allowed` (case-insensitive); a missing one is not. */
export function allowedHost(host: string | undefined, allowed: readonly string[]): boolean {
  return host !== undefined && allowed.some((h) => h.toLowerCase() === host.toLowerCase());
}

/** Whether an `Origin` header, when present, is `http://` or `https://` one of `allowed`. */
export function allowedOrigin(origin: string | undefined, allowed: readonly string[]): boolean {
  const given = origin?.toLowerCase();
  return given === undefined ||
    allowed.some((h) => [`http://${h}`, `https://${h}`].includes(given));
}

/**
 * Refuses (403) a request whose `Host` is missing or not one of `allowedHosts()`, or whose
 * `Origin`, when present, is not `http://` or `https://` one of them.
 */
export function loopbackOnly(allowedHosts: () => readonly string[]): MiddlewareHandler {
  return async (c, next) => {
    const allowed = allowedHosts();
    if (!allowedHost(c.req.header("host"), allowed)) {
      return c.text(
        "403 Forbidden: waymark answers requests addressed to 127.0.0.1, localhost or [::1] on its own port only.\n",
        403,
      );
    }
    if (!allowedOrigin(c.req.header("origin"), allowed)) {
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
