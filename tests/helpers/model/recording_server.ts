/**
 * The loopback HTTP server under each model stand-in: it records every request as the host sent
 * it (path and parsed JSON body) and hands it to the API's own handler.
 * @module
 */
import type { Move } from "./diligent.ts";

// deno-lint-ignore no-explicit-any
type Json = Record<string, any>;

/** One request the host sent, as received. */
export interface Recorded {
  /** The path with its query. */
  path: string;
  /** The parsed JSON body (empty for a GET). */
  body: Json;
  /** What the stand-in's agent answered, for a model call. */
  answer?: Move;
}

/** A running stand-in. */
export interface ModelServer {
  /** `http://127.0.0.1:PORT`, for ANTHROPIC_BASE_URL or GOOGLE_GEMINI_BASE_URL. */
  url: string;
  /** Every request so far, in arrival order. */
  requests: Recorded[];
  /** Stops listening. */
  close(): Promise<void>;
}

/** What an API answers one recorded request with (`raw` is the body's text). */
export type ApiHandler = (record: Recorded, raw: string) => Response;

/** Starts a recording server on a free loopback port. */
export function serveRecording(handle: ApiHandler): ModelServer {
  const requests: Recorded[] = [];
  const server = Deno.serve(
    { hostname: "127.0.0.1", port: 0, onListen: () => {} },
    async (req) => {
      const url = new URL(req.url);
      const raw = req.method === "POST" ? await req.text() : "";
      const record: Recorded = {
        path: url.pathname + url.search,
        body: raw ? JSON.parse(raw) : {},
      };
      requests.push(record);
      return handle(record, raw);
    },
  );
  return {
    url: `http://127.0.0.1:${server.addr.port}`,
    requests,
    close: () => server.shutdown(),
  };
}
