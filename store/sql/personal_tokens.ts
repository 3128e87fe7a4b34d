/**
 * Personal access tokens, for teams that run the HTTP service without an identity provider.
 * A token is `wmp_<id>_<secret>`: the id names it in `tokens list`/`revoke`, the secret is 32
 * random bytes. It is shown once, when created; the database keeps only the SHA-256 of the
 * whole token (a high-entropy secret needs no slow hash), so a stolen database yields no
 * token. One implementation for every dialect (plain Kysely).
 * @module
 */
import type { Kysely } from "npm:kysely@0.29.9";
import { sha256 } from "npm:@noble/hashes@2.4.0/sha2.js";
import { bytesToHex } from "npm:@noble/hashes@2.4.0/utils.js";
import type { Clock, Random } from "../../engine/model/ports.ts";
import { type Principal, PRINCIPAL_KINDS } from "../../engine/access/principal.ts";
import type { Database, PersonalTokensTable } from "./database.ts";

/** What every personal access token starts with (so a verifier can tell it from a JWT). */
export const PERSONAL_TOKEN_PREFIX = "wmp_";

const TOKEN_FORM = /^wmp_([0-9a-f]{12})_([A-Za-z0-9_-]{43})$/;

/** One token as listed: never the token itself. */
export interface PersonalTokenRecord {
  /** Its id (12 hex digits). */
  id: string;
  /** The name it was given: the principal's display name. */
  name: string;
  /** A person or a bot. */
  kind: Principal["kind"];
  /** The scopes it grants. */
  scopes: string[];
  /** When it was created (ISO-8601). */
  createdAt: string;
  /** When it expires, or `null` (never). */
  expiresAt: string | null;
  /** When it was revoked, or `null`. */
  revokedAt: string | null;
}

/** What a new token is given. */
export interface NewPersonalToken {
  /** Its name (who it stands for). */
  name: string;
  /** A person or a bot. */
  kind: Principal["kind"];
  /** The scopes it grants. */
  scopes: readonly string[];
  /** When it expires, or `null`. */
  expiresAt: string | null;
}

/** The store's personal access tokens. */
export interface PersonalTokens {
  /** Creates a token: the token itself (show it once) and its record. */
  create(spec: NewPersonalToken): Promise<{ token: string; record: PersonalTokenRecord }>;
  /** Every token, newest first (revoked and expired ones too). */
  list(): Promise<PersonalTokenRecord[]>;
  /** Revokes a token by id; its record, or `null` when there is none. Revoking twice is a no-op. */
  revoke(id: string): Promise<PersonalTokenRecord | null>;
  /** The record of a presented token (any state), or `null` when it names none. */
  find(token: string): Promise<PersonalTokenRecord | null>;
}

/** The principal a personal access token names: `pat:<name>`, so a renewed token keeps it. */
export function principalOfToken(record: PersonalTokenRecord): Principal {
  return { subject: `pat:${record.name}`, displayName: record.name, kind: record.kind };
}

function hashOf(token: string): string {
  return bytesToHex(sha256(new TextEncoder().encode(token)));
}

function base64url(bytes: Uint8Array): string {
  return btoa(String.fromCharCode(...bytes)).replace(/\+/g, "-").replace(/\//g, "_")
    .replace(/=+$/, "");
}

function recordOf(row: PersonalTokensTable): PersonalTokenRecord {
  return {
    id: row.token_id,
    name: row.name,
    kind: PRINCIPAL_KINDS.find((k) => k === row.kind) ?? "person",
    scopes: row.scopes.split(" ").filter((s) => s !== ""),
    createdAt: row.created_at,
    expiresAt: row.expires_at,
    revokedAt: row.revoked_at,
  };
}

/** The personal access tokens of a SQL database (either dialect). */
export function sqlPersonalTokens(
  db: Kysely<Database>,
  runtime: { clock: Clock; random: Random },
): PersonalTokens {
  const byId = (id: string) =>
    db.selectFrom("personal_tokens").selectAll().where("token_id", "=", id).executeTakeFirst();
  return {
    async create(spec) {
      const id = bytesToHex(runtime.random.bytes(6));
      const token = `${PERSONAL_TOKEN_PREFIX}${id}_${base64url(runtime.random.bytes(32))}`;
      const row: PersonalTokensTable = {
        token_id: id,
        name: spec.name,
        kind: spec.kind,
        token_hash: hashOf(token),
        scopes: spec.scopes.join(" "),
        created_at: runtime.clock.now(),
        expires_at: spec.expiresAt,
        revoked_at: null,
      };
      await db.insertInto("personal_tokens").values(row).execute();
      return { token, record: recordOf(row) };
    },
    async list() {
      const rows = await db.selectFrom("personal_tokens").selectAll()
        .orderBy("created_at", "desc").orderBy("token_id").execute();
      return rows.map(recordOf);
    },
    async revoke(id) {
      await db.updateTable("personal_tokens").set({ revoked_at: runtime.clock.now() })
        .where("token_id", "=", id).where("revoked_at", "is", null).execute();
      const row = await byId(id);
      return row ? recordOf(row) : null;
    },
    async find(token) {
      const form = TOKEN_FORM.exec(token);
      if (!form) return null;
      const row = await db.selectFrom("personal_tokens").selectAll()
        .where("token_hash", "=", hashOf(token)).executeTakeFirst();
      return row && row.token_id === form[1] ? recordOf(row) : null;
    },
  };
}
