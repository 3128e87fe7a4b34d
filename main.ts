/**
 * The `waymark` command: parses arguments, opens the store, wires the adapters. While serving
 * stdio, stdout carries JSON-RPC only; everything else goes to stderr.
 * @module
 */
import { parseArgs } from "node:util";
import { readFile } from "node:fs/promises";
import process from "node:process";
import {
  formatLoadError,
  loadWorkflowFile,
  openWaymark,
  renderInspect,
  renderList,
  resolvePaths,
  serveMcpHttp,
  serveMcpStdio,
  VERSION,
  type WaymarkOptions,
} from "./mod.ts";
import { rotateKeyring } from "./store/mod.ts";

const HELP = `waymark ${VERSION}: a rewind-safe workflow runtime for AI coding agents, over MCP.

Usage:
  waymark serve                    serve MCP over stdio (the default command)
  waymark serve --http PORT        serve MCP over Streamable HTTP at http://127.0.0.1:PORT/mcp
  waymark workflows list           list workflows from every source
  waymark workflows inspect ID     show one workflow's steps
  waymark workflows validate FILE  check a workflow file and print its workflowHash
  waymark keys rotate              new signing key; tokens signed by the previous one stay valid
  waymark --version | --help

Options:
  --home DIR            data folder (default $WAYMARK_HOME or ~/.waymark)
  --db URL              database URL (default $WAYMARK_DB_URL or file:<home>/waymark.db;
                        :memory: for a throwaway store)
  --workspace DIR       project folder whose .waymark/workflows is searched (default: cwd)
  --workflows-dir DIR   an extra workflow folder (repeatable; lowest precedence)
  --busy-timeout MS     how long to wait for another process's database lock (default 5000)
  --http PORT           (serve) Streamable HTTP on 127.0.0.1:PORT instead of stdio
  --enable-start-session
                        (serve) list the start_session tool (or WAYMARK_ENABLE_START_SESSION=1)
`;

function log(line: string): void {
  process.stderr.write(`[waymark] ${line}\n`);
}

async function main(argv: string[]): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({
      args: argv,
      allowPositionals: true,
      options: {
        home: { type: "string" },
        db: { type: "string" },
        workspace: { type: "string" },
        "workflows-dir": { type: "string", multiple: true },
        "busy-timeout": { type: "string" },
        http: { type: "string" },
        "enable-start-session": { type: "boolean" },
        help: { type: "boolean", short: "h" },
        version: { type: "boolean", short: "V" },
      },
    });
  } catch (error) {
    process.stderr.write(`${(error as Error).message}\n\n${HELP}`);
    return 2;
  }
  const { values, positionals } = parsed;
  if (values.help) {
    process.stdout.write(HELP);
    return 0;
  }
  if (values.version) {
    process.stdout.write(`waymark ${VERSION}\n`);
    return 0;
  }
  const options: WaymarkOptions = {
    home: values.home,
    dbUrl: values.db,
    workspace: values.workspace,
    extraWorkflowDirs: values["workflows-dir"],
    busyTimeoutMs: values["busy-timeout"] ? Number(values["busy-timeout"]) : undefined,
  };
  const [command = "serve", sub, arg] = positionals;
  if (command === "serve") {
    const enableStartSession = values["enable-start-session"] === true ||
      /^(1|true|yes)$/i.test(process.env.WAYMARK_ENABLE_START_SESSION ?? "");
    if (values.http !== undefined) {
      const port = Number(values.http);
      if (!Number.isInteger(port) || port < 0 || port > 65535) {
        process.stderr.write(`--http needs a port number, got ${JSON.stringify(values.http)}\n`);
        return 2;
      }
      return await serveHttp(options, { port, enableStartSession });
    }
    return await serve(options, { enableStartSession });
  }
  if (command === "workflows") return await workflows(options, sub, arg);
  if (command === "keys" && sub === "rotate") {
    const { keysFile } = resolvePaths(options);
    const keyring = await rotateKeyring(keysFile);
    process.stdout.write(
      `rotated ${keysFile}: current key ${keyring.current.id}, previous ${keyring.previous?.id}\n`,
    );
    return 0;
  }
  process.stderr.write(`unknown command \`${command}\`\n\n${HELP}`);
  return 2;
}

async function serve(
  options: WaymarkOptions,
  flags: { enableStartSession: boolean },
): Promise<number> {
  const waymark = await openWaymark(options);
  log(`serving MCP over stdio; database ${waymark.paths.dbUrl}`);
  await new Promise<void>((resolveClosed) => {
    serveMcpStdio(() => waymark.mcpServer({ log, ...flags }), { log, onClose: resolveClosed });
  });
  await waymark.close();
  return 0;
}

async function serveHttp(
  options: WaymarkOptions,
  flags: { port: number; enableStartSession: boolean },
): Promise<number> {
  const waymark = await openWaymark(options);
  log(`database ${waymark.paths.dbUrl}`);
  const handle = await serveMcpHttp(
    () => waymark.mcpServer({ log, enableStartSession: flags.enableStartSession }),
    { port: flags.port, log },
  );
  const stop = () => void handle.close();
  process.on("SIGINT", stop);
  process.on("SIGTERM", stop);
  await handle.finished;
  await waymark.close();
  return 0;
}

async function workflows(
  options: WaymarkOptions,
  sub: string | undefined,
  arg: string | undefined,
): Promise<number> {
  if (sub === "validate") {
    if (!arg) {
      process.stderr.write("usage: waymark workflows validate FILE\n");
      return 2;
    }
    const loaded = await loadWorkflowFile({
      source: "extra",
      file: arg,
      text: await readFile(arg, "utf8"),
    });
    if (!loaded.ok) {
      process.stderr.write(`${formatLoadError(loaded.error)}\n`);
      return 1;
    }
    process.stdout.write(
      `${arg}: ok (${loaded.workflow.id}, ${loaded.workflow.compiled.steps.length} steps, ${loaded.workflow.hash})\n`,
    );
    for (const w of loaded.workflow.warnings) {
      process.stdout.write(`warning [${w.code}]: ${w.message}\n`);
    }
    return 0;
  }
  const waymark = await openWaymark(options);
  try {
    if (sub === "list" || sub === undefined) {
      const result = await waymark.list();
      if (!result.ok) throw new Error(result.error.message);
      process.stdout.write(`${renderList(result.value)}\n`);
      return 0;
    }
    if (sub === "inspect" && arg) {
      const result = await waymark.inspect(arg);
      if (!result.ok) {
        process.stderr.write(`${result.error.message}\n`);
        return 1;
      }
      process.stdout.write(`${renderInspect(result.value)}\n`);
      return 0;
    }
    process.stderr.write(`usage: waymark workflows list|inspect ID|validate FILE\n`);
    return 2;
  } finally {
    await waymark.close();
  }
}

if (import.meta.main) {
  main(process.argv.slice(2)).then((code) => process.exit(code), (error) => {
    log(`fatal: ${error instanceof Error ? error.message : String(error)}`);
    process.exit(1);
  });
}
