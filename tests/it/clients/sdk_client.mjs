// Drive `jacobian serve` (stdio or HTTP) with the official MCP TypeScript SDK (not ours).
//
// Usage: node sdk_client.mjs http URL
//        node sdk_client.mjs stdio JACOBIAN_BINARY DATA_DIR
//
// Lists tools, resources, templates and prompts; describes a capability; builds a CNF
// (its input object sent as the SDK sends it), solves it, verifies the certificate with
// the checker its check_with names; reads the experiment resource; gets a prompt; sets
// the log level and collects the log notifications; asks for completions of experiment
// ids, capability ids and a prompt argument. Prints one JSON object of observations
// for the Rust test (tests/it/clients.rs) to assert on. The SDK validates every
// structured result against the tool's output schema with Ajv; its warnings go to stderr.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { LoggingMessageNotificationSchema } from "@modelcontextprotocol/sdk/types.js";

const [mode, target, dataDir] = process.argv.slice(2);
const transport =
  mode === "http"
    ? new StreamableHTTPClientTransport(new URL(target))
    : new StdioClientTransport({ command: target, args: ["--data-dir", dataDir, "serve"], stderr: "ignore" });

const client = new Client({ name: "jacobian-ts-sdk-test", version: "1.0.0" });
const logs = [];
client.setNotificationHandler(LoggingMessageNotificationSchema, (notification) => {
  logs.push(notification.params);
});
await client.connect(transport);

const seen = {};
const structured = (result) => {
  if (!result.structuredContent) throw new Error(`no structured content: ${JSON.stringify(result.content)}`);
  return result.structuredContent;
};
const invoke = async (args) => structured(await client.callTool({ name: "capability.invoke", arguments: args }));

seen.server = client.getServerVersion();
seen.capabilities = client.getServerCapabilities();
seen.tools = (await client.listTools()).tools.map((t) => t.name).sort();
seen.resources = (await client.listResources()).resources.map((r) => r.uri).sort();
seen.templates = (await client.listResourceTemplates()).resourceTemplates.map((t) => t.uriTemplate).sort();
seen.prompts = (await client.listPrompts()).prompts.map((p) => p.name).sort();

const described = structured(
  await client.callTool({ name: "capability.describe", arguments: { capability_id: "sat.solve", view: "CONTRACT" } }),
);
seen.described = described.capability_id ?? described.id ?? null;
seen.described_keys = Object.keys(described).sort();

await client.setLoggingLevel("info");

// The pigeonhole principle for 4 pigeons and 3 holes: unsatisfiable.
const v = (p, h) => p * 3 + h + 1;
const clauses = [];
for (let p = 0; p < 4; p++) clauses.push([0, 1, 2].map((h) => v(p, h)).join(" ") + " 0");
for (let h = 0; h < 3; h++)
  for (let a = 0; a < 4; a++) for (let b = a + 1; b < 4; b++) clauses.push(`-${v(a, h)} -${v(b, h)} 0`);
const dimacs = `p cnf 12 ${clauses.length}\n${clauses.join("\n")}\n`;
const cnf = await invoke({ capability_id: "sat.cnf.construct", input: { dimacs } });
const cnfUri = cnf.artifacts[0].uri;
const solved = await invoke({ capability_id: "sat.solve", input: { cnf: cnfUri } });
seen.answer = solved.output.status;
const route = solved.check_with;
const verified = await invoke({
  capability_id: route.verify_capability_id,
  mode: "VERIFY",
  input: { cnf: cnfUri, certificate: route.certificate_artifact },
});
seen.verification = verified.verification.status;
seen.assurance = verified.assurance;
// A refused call: the tool's typed answer, and a warning in the log.
const refused = await client.callTool({ name: "capability.invoke", arguments: { capability_id: "sat.solve", input: { cnf: 7 } } });
seen.refused = { isError: refused.isError ?? false, code: refused.structuredContent?.diagnostic?.code ?? null };
// Arguments that do not fit the tool (no capability_id): refused as a result, and logged too.
const unfit = await client.callTool({ name: "capability.invoke", arguments: { input: {} } });
seen.unfit = { isError: unfit.isError ?? false, code: unfit.structuredContent?.diagnostic?.code ?? null };

const experiment = solved.accounting.experiment;
seen.experiment = experiment;
const read = await client.readResource({ uri: `experiment://${experiment}` });
seen.experiment_invocations = JSON.parse(read.contents[0].text).invocations.length;
const prompt = await client.getPrompt({ name: "jacobian-discover", arguments: { task: "count magmas of order 3" } });
seen.prompt_starts = prompt.messages[0].content.text.split("\n")[0];

const complete = async (ref, name, value) =>
  (await client.complete({ ref, argument: { name, value } })).completion;
seen.complete_experiment = await complete({ type: "ref/resource", uri: "experiment://{id}" }, "id", experiment.slice(0, 6));
seen.complete_capability = await complete({ type: "ref/resource", uri: "capability://{id}" }, "id", "sat.");
seen.complete_prompt = await complete({ type: "ref/prompt", name: "jacobian-check-evidence" }, "result", "episode://");

// Log notifications may trail the last answer by a moment.
await new Promise((resolve) => setTimeout(resolve, 200));
seen.logs = logs;
await client.close();
process.stdout.write(JSON.stringify(seen) + "\n");
