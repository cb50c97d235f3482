"""Per-call latency of the Python bundle beside the Rust echo bundle, through MCP over stdio.

    python3 measure.py DATA_DIR   # a data directory with partitions.wasm and test.echo.message installed

Prints the median of 35 sequential `capability.invoke` calls (after 5 warm-up calls) for each case.
Needs the official MCP Python SDK (`pip install mcp`) and `jacobian` on PATH.
"""

import asyncio
import statistics
import sys
import time

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

CASES = [
    ("test.echo.message", {"message": "hi"}),
    ("number_theory.count.partitions", {"n": 0}),
    ("number_theory.count.partitions", {"n": 100}),
    ("number_theory.count.partitions", {"n": 1000}),
]


async def main(data_dir):
    server = StdioServerParameters(command="jacobian", args=["--data-dir", data_dir, "serve"])
    async with stdio_client(server) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            for capability, given in CASES:
                times = []
                for _ in range(40):
                    start = time.perf_counter()
                    result = await session.call_tool("capability.invoke", {"capability_id": capability, "input": given})
                    times.append(time.perf_counter() - start)
                    if result.is_error:
                        raise SystemExit(f"{capability} {given}: {result.content}")
                print(f"{capability} {given}: p50 {statistics.median(times[5:]) * 1000:.2f} ms")


asyncio.run(main(sys.argv[1]))
