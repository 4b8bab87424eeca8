// Drive a Colony MCP server with the official TypeScript SDK client and print what it saw, as JSON.
//
//   node exercise.mjs --plan calls.json --http http://127.0.0.1:8787/mcp [--header Name=value ...]
//   node exercise.mjs --plan calls.json --stdio -- /path/to/colony mcp
//
// The plan is a JSON list of {"label", "name", "arguments"}. The client lists every tool
// (which compiles each output schema, as every SDK client does), then makes each call in
// order. A call the SDK rejects (a JSON-RPC error, or a result whose structured content
// does not match the tool's output schema) is reported with its code and message, never
// thrown, so one bad answer cannot hide the others.
import { readFileSync } from "node:fs";

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

function parseArguments(argv) {
  const options = { headers: {}, command: null, url: null, plan: null };
  for (let index = 0; index < argv.length; index += 1) {
    const argument = argv[index];
    if (argument === "--plan") options.plan = argv[++index];
    else if (argument === "--http") options.url = argv[++index];
    else if (argument === "--header") {
      const [name, ...value] = argv[++index].split("=");
      options.headers[name] = value.join("=");
    } else if (argument === "--stdio") {
      const rest = argv.slice(index + 1);
      options.command = rest[0] === "--" ? rest.slice(1) : rest;
      break;
    } else throw new Error(`unknown option ${argument}`);
  }
  if (!options.plan || (options.url === null) === (options.command === null)) {
    throw new Error("usage: exercise.mjs --plan FILE (--http URL [--header K=V]... | --stdio -- COMMAND...)");
  }
  return options;
}

function transportFor(options) {
  if (options.url !== null) {
    return new StreamableHTTPClientTransport(new URL(options.url), { requestInit: { headers: options.headers } });
  }
  const [command, ...args] = options.command;
  return new StdioClientTransport({ command, args, env: { ...process.env }, stderr: "inherit" });
}

function describeError(error) {
  return { code: error?.code ?? null, message: String(error?.message ?? error), data: error?.data ?? null };
}

async function main() {
  const options = parseArguments(process.argv.slice(2));
  const plan = JSON.parse(readFileSync(options.plan, "utf8"));
  const client = new Client({ name: "colony-ts-exercise", version: "1.0.0" });
  await client.connect(transportFor(options));
  const report = { server: client.getServerVersion() ?? null, tools: [], calls: [] };
  try {
    report.tools = (await client.listTools()).tools;
    for (const call of plan) {
      const entry = { label: call.label ?? call.name, name: call.name, arguments: call.arguments ?? {} };
      try {
        entry.result = await client.callTool({ name: call.name, arguments: entry.arguments });
      } catch (error) {
        entry.error = describeError(error);
      }
      report.calls.push(entry);
    }
  } finally {
    await client.close();
  }
  process.stdout.write(`${JSON.stringify(report)}\n`);
}

main().catch((error) => {
  process.stderr.write(`exercise.mjs: ${error?.stack ?? error}\n`);
  process.exit(2);
});
