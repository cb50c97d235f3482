"""Cancel a running invocation through MCP and read what the experiment recorded.

Usage: python3 cancel_client.py URL

Prints one JSON object: the session's experiment accounting after the
cancellation, and the result of a call made after it.
"""

import asyncio
import json
import sys

from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from long_call import start_long_enumeration


async def main(url: str) -> None:
    transport = streamable_http_client(url, max_sse_event_size=None)
    async with Client(transport, mode="legacy") as client:
        first = await client.call_tool(
            "capability.invoke", {"capability_id": "sat.cnf.construct", "input": {"dimacs": "p cnf 1 1\n1 0\n"}})
        experiment = first.structured_content["accounting"]["experiment"]
        call = await start_long_enumeration(client)
        call.cancel()
        try:
            await call
        except asyncio.CancelledError:
            pass
        # The server interrupts the guest; give it a moment to record the stop.
        await asyncio.sleep(0.5)
        accounting = json.loads((await client.read_resource(f"experiment://{experiment}/accounting")).contents[0].text)
        after = await client.call_tool(
            "capability.invoke", {"capability_id": "graph.enumerate.nonisomorphic",
                                  "input": {"order": 5, "family": "all"}})
        print(json.dumps({"accounting": accounting, "after": after.structured_content["output"]}), flush=True)


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1]))
