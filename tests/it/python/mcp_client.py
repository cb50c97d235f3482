"""Drive `jacobian serve --http` with the official MCP Python SDK (not ours).

Usage: python3 mcp_client.py URL SECRET

Lists tools, resources, templates and prompts; builds a CNF, solves it (with
a progress callback), verifies the certificate, runs a knowledge search whose
question carries SECRET, reads the session's experiment and its archive.
Prints one JSON object of observations for the Rust test to assert on.
"""

import asyncio
import json
import sys

from mcp import Client
from mcp.client.streamable_http import streamable_http_client


def structured(result):
    if result.structured_content is None:
        raise SystemExit(f"no structured content: {result.content}")
    return result.structured_content


async def main(url: str, secret: str) -> None:
    seen = {}
    progress = []

    async def on_progress(value, total, message):
        progress.append([value, total, message])

    # Archives carry component bytes: allow SSE events above the SDK's 1 MiB default.
    transport = streamable_http_client(url, max_sse_event_size=None)
    async with Client(transport, mode="legacy") as client:
        tools = await client.list_tools()
        seen["tools"] = sorted(t.name for t in tools.tools)
        resources = await client.list_resources()
        seen["resources"] = sorted(str(r.uri) for r in resources.resources)
        templates = await client.list_resource_templates()
        seen["templates"] = sorted(t.uri_template for t in templates.resource_templates)
        prompts = await client.list_prompts()
        seen["prompts"] = sorted(p.name for p in prompts.prompts)

        # An unsatisfiable formula: the pigeonhole principle for 4 pigeons and 3 holes.
        clauses = []
        var = lambda p, h: p * 3 + h + 1
        for p in range(4):
            clauses.append(" ".join(str(var(p, h)) for h in range(3)) + " 0")
        for h in range(3):
            for a in range(4):
                for b in range(a + 1, 4):
                    clauses.append(f"-{var(a, h)} -{var(b, h)} 0")
        dimacs = f"p cnf 12 {len(clauses)}\n" + "\n".join(clauses) + "\n"
        cnf = structured(await client.call_tool(
            "capability.invoke", {"capability_id": "sat.cnf.construct", "input": {"dimacs": dimacs}}))
        cnf_uri = cnf["artifacts"][0]["uri"]
        solved = structured(await client.call_tool(
            "capability.invoke", {"capability_id": "sat.solve", "input": {"cnf": cnf_uri}},
            progress_callback=on_progress))
        seen["answer"] = solved["output"]["status"]
        route = solved["check_with"]
        verified = structured(await client.call_tool("capability.invoke", {
            "capability_id": route["verify_capability_id"], "mode": "VERIFY",
            "input": {"cnf": cnf_uri, "certificate": route["certificate_artifact"]}}))
        seen["verification"] = verified["verification"]["status"]
        seen["assurance"] = verified["assurance"]

        # Long enough (about a second of guest work) to report progress.
        enumerated = structured(await client.call_tool(
            "capability.invoke", {"capability_id": "graph.enumerate.nonisomorphic",
                                  "input": {"order": 9, "family": "connected"}},
            progress_callback=on_progress))
        seen["connected_graphs_on_9"] = enumerated["output"]["count"]
        seen["progress"] = progress

        searched = structured(await client.call_tool(
            "capability.invoke", {"capability_id": "knowledge.search",
                                  "input": {"query": f"what is {secret} in a magma"}}))
        seen["search_status"] = searched["status"]

        experiments = {r["accounting"]["experiment"] for r in (cnf, solved, verified, enumerated, searched)}
        seen["experiments"] = sorted(experiments)
        experiment = solved["accounting"]["experiment"]
        summary = await client.read_resource(f"experiment://{experiment}")
        seen["experiment"] = json.loads(summary.contents[0].text)
        accounting = await client.read_resource(f"experiment://{experiment}/accounting")
        seen["accounting_total"] = json.loads(accounting.contents[0].text)["total"]
        archive = await client.read_resource(f"experiment://{experiment}/archive")
        pack = json.loads(archive.contents[0].text)
        seen["archive"] = {"pack_hash": pack["pack_hash"], "episodes": len(pack["episodes"]),
                           "components": len(pack["components"]), "artifacts": len(pack["artifacts"])}
        with open(sys.argv[3], "w") as out:
            json.dump(pack, out)

        # Arguments outside a tool's input schema: the tool's typed diagnostic, not a protocol error.
        bad = {}
        for name, tool, arguments in [
            ("unknown_field", "capability.invoke", {"capability_id": "sat.solve", "input": {}, "experimnet": "x"}),
            ("wrong_type", "capability.invoke",
             {"capability_id": "sat.solve", "input": {}, "budget": {"fuel": "lots"}}),
            ("missing", "workspace.write",
             {"workspace_id": "ws-0", "idempotency_key": "k", "entries": [{"type": "scratch", "text": "x"}]}),
            ("describe_limit", "capability.describe", {"limit": "five"}),
        ]:
            result = await client.call_tool(tool, arguments)
            diagnostic = (result.structured_content or {}).get("diagnostic") or {}
            bad[name] = {"is_error": result.is_error, "code": diagnostic.get("code"),
                         "stage": diagnostic.get("stage"), "path": (diagnostic.get("details") or {}).get("path"),
                         "text": result.content[0].text if result.content else ""}
        seen["bad_arguments"] = bad
    print(json.dumps(seen))


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2]))
