/**
 * Principals: who acted. An authenticated call (a bearer JWT from the team's identity provider,
 * or a personal access token) names one; a call on a local server with no authentication has
 * none. The engine records it and never decides how it was proven: that is the HTTP adapter's.
 * @module
 */
import { z } from "npm:zod@4.6.7";

/** The kinds of principal: a person, or a bot (CI, a cloud agent) acting under its own name. */
export const PRINCIPAL_KINDS = ["person", "bot"] as const;

/** One authenticated principal, as recorded on the events its calls write. */
export const principalSchema = z.object({
  /** Stable id: the JWT's `iss` and `sub` joined (`<iss>#<sub>`), or `pat:<token id>`'s owner. */
  subject: z.string().min(1).max(512),
  /** A name for people to read (the JWT's `name`/`preferred_username`, the token's owner). */
  displayName: z.string().max(256),
  /** A person or a bot. */
  kind: z.enum(PRINCIPAL_KINDS),
}).strict();

/** One authenticated principal. */
export type Principal = z.infer<typeof principalSchema>;
