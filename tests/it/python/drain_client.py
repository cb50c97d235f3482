"""Start a long invocation, say so, and print its result once it finishes.

Usage: python3 drain_client.py URL

The Rust test sends SIGTERM to the server after "started": a graceful
shutdown must let this call finish before the sessions close.
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
        # The SDK validates a result against the tool's output schema and
        # lists the tools first if it has not yet: list them now, so nothing
        # but the drained call's own answer is needed once the server drains.
        await client.list_tools()
        call = await start_long_enumeration(client)
        print("started", flush=True)
        result = await call
        print(json.dumps(result.structured_content["output"]), flush=True)


if __name__ == "__main__":
    try:
        asyncio.run(main(sys.argv[1]))
    except BaseException as e:  # the session closing after the answer is fine
        if not isinstance(e, (KeyboardInterrupt, SystemExit)):
            print(f"error: {e!r}", file=sys.stderr)
