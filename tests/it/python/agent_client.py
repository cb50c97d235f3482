"""An agent-shaped client of `jacobian serve --http`, with the official MCP Python SDK.

Usage: python3 agent_client.py URL

It knows the five tools and what the instructions say, and no capability id:
every step is chosen from `capability.describe` answers. Three chains:

- SAT: from a DIMACS text, find what builds a CNF artifact; holding the CNF,
  find what takes it (a producer whose required inputs it can fill); solve;
  verify with the checker the result's check_with names.
- Graph: find what constructs a graph (its published example is the input);
  holding the graph, find what takes it; compute; verify.
- Claim: find what parses a propositional claim (its example); holding the
  claim, find what takes it and splits a conjunction.

Prints one JSON object: the capability ids chosen per chain and the outcomes.
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


class Agent:
    def __init__(self, client):
        self.client = client
        self.held = []  # (artifact URI, schema_uri), oldest first
        self.chosen = []

    async def describe(self, **arguments):
        return structured(await self.client.call_tool("capability.describe", arguments))

    async def contract(self, capability_id):
        return await self.describe(capability_id=capability_id, view="CONTRACT")

    async def invoke(self, capability_id, payload, mode=None):
        arguments = {"capability_id": capability_id, "input": payload}
        if mode:
            arguments["mode"] = mode
        result = structured(await self.client.call_tool("capability.invoke", arguments))
        if result["status"] != "COMPLETED":
            raise SystemExit(f"{capability_id} failed: {result.get('diagnostic')}")
        self.chosen.append(capability_id)
        for artifact in result.get("artifacts", []):
            self.held.append((artifact["uri"], artifact["schema_uri"]))
        return result

    def fill(self, contract):
        """Every required field from the newest held artifact of a type the field takes, and those of the
        first `oneOf` alternative that can be filled so; None if that cannot be done."""
        def filled(fields):
            payload = {}
            for field in fields:
                types = {a["schema_uri"] for a in contract["accepts"] if a["field"] == field}
                held = [uri for uri, schema in reversed(self.held) if schema in types]
                if not held:
                    return None
                payload[field] = held[0]
            return payload
        schema = contract["input_schema"]
        payload = filled(schema.get("required", []))
        alternatives = schema.get("oneOf") or [{}]
        for alternative in alternatives:
            extra = filled(alternative.get("required", []))
            if payload is not None and extra is not None:
                return {**payload, **extra}
        return None

    async def first_producer(self, query):
        """The best-ranked producer that starts from what the agent has (no artifact yet)."""
        page = await self.describe(query=query)
        for item in page["results"]:
            if item["kind"] == "PRODUCER" and item["input_kind"] != "TYPED_ARTIFACT":
                return item["capability_id"], await self.contract(item["capability_id"])
        raise SystemExit(f"no producer for {query!r}: {page}")

    async def next_step(self, schema_uri, query=None):
        """A producer that takes the artifact and whose required inputs can all be filled from what is held."""
        arguments = {"artifact_type": schema_uri, "limit": 20}
        if query:
            arguments["query"] = query
        page = await self.describe(**arguments)
        for item in page["results"]:
            if item["kind"] != "PRODUCER" or item.get("artifact_match", {}).get("relation") != "ACCEPTS":
                continue
            payload = self.fill(await self.contract(item["capability_id"]))
            if payload is not None:
                return item["capability_id"], payload
        raise SystemExit(f"nothing takes {schema_uri}: {page}")

    async def verify(self, result):
        route = result["check_with"]
        checker = route["verify_capability_id"]
        # The certificate the route names is the newest artifact of its type.
        certificate = route["certificate_artifact"]
        self.held = [h for h in self.held if h[0] != certificate] + [
            h for h in self.held if h[0] == certificate]
        payload = self.fill(await self.contract(checker))
        if payload is None:
            raise SystemExit(f"cannot fill {checker} from {self.held}")
        verified = await self.invoke(checker, payload, mode="VERIFY")
        return verified["verification"]["status"], verified["assurance"]


async def sat_chain(client):
    agent = Agent(client)
    dimacs = "p cnf 2 4\n1 2 0\n-1 2 0\n1 -2 0\n-1 -2 0\n"
    producer, contract = await agent.first_producer("build a CNF formula from DIMACS text")
    strings = [f for f in contract["input_schema"].get("required", [])
               if contract["input_schema"]["properties"][f].get("type") == "string"]
    if len(strings) != 1:
        raise SystemExit(f"{producer}: which field takes the DIMACS text? {contract['input_schema']}")
    built = await agent.invoke(producer, {strings[0]: dimacs})
    step, payload = await agent.next_step(built["artifacts"][0]["schema_uri"])
    solved = await agent.invoke(step, payload)
    status, assurance = await agent.verify(solved)
    return {"chain": agent.chosen, "answer": solved["output"].get("status"), "verification": status,
            "assurance": assurance}


async def graph_chain(client):
    agent = Agent(client)
    producer, contract = await agent.first_producer("construct a graph from its vertices and edges")
    built = await agent.invoke(producer, contract["examples"][0]["input"])
    step, payload = await agent.next_step(built["artifacts"][0]["schema_uri"])
    computed = await agent.invoke(step, payload)
    status, assurance = await agent.verify(computed)
    return {"chain": agent.chosen, "verification": status, "assurance": assurance}


async def claim_chain(client):
    agent = Agent(client)
    producer, contract = await agent.first_producer("parse a propositional claim into its structure")
    built = await agent.invoke(producer, contract["examples"][0]["input"])
    step, payload = await agent.next_step(built["artifacts"][0]["schema_uri"], query="split a conjunction")
    split = await agent.invoke(step, payload)
    return {"chain": agent.chosen, "parts": len(split["output"].get("parts", []))}


async def main(url):
    async with Client(streamable_http_client(url), mode="legacy") as client:
        seen = {"sat": await sat_chain(client), "graph": await graph_chain(client),
                "claim": await claim_chain(client)}
    print(json.dumps(seen))


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1]))
