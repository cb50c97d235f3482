"""Shared by the clients: start a long invocation and wait until it runs."""

import asyncio


async def start_long_enumeration(client):
    """All graphs on 9 vertices (about a second of guest time): the task, once
    the first progress notification proves the guest is running."""
    running = asyncio.Event()

    async def on_progress(value, total, message):
        running.set()

    call = asyncio.create_task(client.call_tool(
        "capability.invoke", {"capability_id": "graph.enumerate.nonisomorphic",
                              "input": {"order": 9, "family": "all"}},
        progress_callback=on_progress))
    await running.wait()
    return call
