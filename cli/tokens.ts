/**
 * `waymark tokens create|list|revoke`: personal access tokens for a team service without an
 * identity provider (`docs/team_service.md`). The token is printed once, on stdout, when it is
 * created; the database keeps only its hash, so it cannot be shown again (make a new one).
 * @module
 */
import { loadConfig, type PersonalTokenRecord, sqlPersonalTokens } from "../store/mod.ts";
import type { CliHost, CliInput } from "./host.ts";
import { withWaymark, writeJson } from "./host.ts";

function stateOf(record: PersonalTokenRecord, now: Date): "active" | "revoked" | "expired" {
  if (record.revokedAt !== null) return "revoked";
  if (record.expiresAt !== null && Date.parse(record.expiresAt) <= now.getTime()) return "expired";
  return "active";
}

function line(record: PersonalTokenRecord, now: Date): string {
  return [
    record.id,
    stateOf(record, now).padEnd(7),
    record.kind.padEnd(6),
    `expires ${record.expiresAt?.slice(0, 16).replace("T", " ") ?? "never"}`.padEnd(24),
    `scopes ${record.scopes.join(",") || "-"}`,
    record.name,
  ].join("  ");
}

/** `waymark tokens create --name N [--expires AGE] [--bot] [--auth-scope S]...`. */
export async function createCommand(host: CliHost, input: CliInput): Promise<number> {
  const { name, expires, bot } = input.flags;
  if (name === undefined || input.args.length > 0) return input.usage();
  const scopes = input.flags["auth-scope"] ??
    (await loadConfig(host.paths.home)).auth.scopes ?? [];
  const now = host.now();
  return await withWaymark(host, async ({ store, deps }) => {
    const tokens = sqlPersonalTokens(store.db, deps);
    const { token, record } = await tokens.create({
      name,
      kind: bot ? "bot" : "person",
      scopes,
      expiresAt: expires === undefined ? null : new Date(now.getTime() + expires).toISOString(),
    });
    if (input.flags.json) {
      writeJson(host, { token, ...record });
    } else {
      host.stdout(`${token}\n`);
      host.stderr(
        `created personal access token ${record.id} for ${record.kind} "${record.name}" ` +
          `(expires ${record.expiresAt ?? "never"}; scopes ${
            record.scopes.join(" ") || "none"
          }).\n` +
          "It is shown this once; waymark keeps only its hash. Send it as " +
          "Authorization: Bearer <token> to a serve --http started with --personal-tokens.\n",
      );
    }
    return 0;
  });
}

/** `waymark tokens list`: every token (never the token itself), newest first. */
export async function listCommand(host: CliHost, input: CliInput): Promise<number> {
  if (input.args.length > 0) return input.usage();
  return await withWaymark(host, async ({ store, deps }) => {
    const all = await sqlPersonalTokens(store.db, deps).list();
    const now = host.now();
    if (input.flags.json) {
      writeJson(host, all.map((record) => ({ ...record, state: stateOf(record, now) })));
    } else {
      for (const record of all) host.stdout(`${line(record, now)}\n`);
      if (all.length === 0) host.stderr("no personal access tokens (waymark tokens create)\n");
    }
    return 0;
  });
}

/** `waymark tokens revoke ID`: refused from then on, by every server on the database. */
export async function revokeCommand(host: CliHost, input: CliInput): Promise<number> {
  const [id, ...rest] = input.args;
  if (id === undefined || rest.length > 0) return input.usage();
  return await withWaymark(host, async ({ store, deps }) => {
    const record = await sqlPersonalTokens(store.db, deps).revoke(id);
    if (!record) {
      host.stderr(`no personal access token ${JSON.stringify(id)}; see waymark tokens list\n`);
      return 1;
    }
    if (input.flags.json) writeJson(host, { ...record, state: stateOf(record, host.now()) });
    else host.stdout(`revoked ${record.id} (${record.name}) at ${record.revokedAt}\n`);
    return 0;
  });
}
