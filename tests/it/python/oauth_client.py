"""Drive `jacobian serve --http` behind OAuth with the official MCP Python SDK.

Usage: python3 oauth_client.py URL ISSUER CLIENT_ID CLIENT_SECRET

First without a token (plain HTTP, as any client starts): the 401, its
challenge and the protected resource metadata it points to. Then the SDK's
client-credentials provider, which follows that metadata to the
authorization server, obtains a token for this resource and calls the
server: list tools, invoke a capability. Prints one JSON object of
observations for the Rust test to assert on.
"""

import asyncio
import json
import re
import sys
import urllib.error
import urllib.request

import httpx2
from mcp import Client
from mcp.client.auth.extensions.client_credentials import ClientCredentialsOAuthProvider
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.auth import OAuthClientInformationFull, OAuthToken


class Memory:
    """Token storage in memory."""

    def __init__(self):
        self.tokens = None
        self.client = None

    async def get_tokens(self):
        return self.tokens

    async def set_tokens(self, tokens: OAuthToken):
        self.tokens = tokens

    async def get_client_info(self):
        return self.client

    async def set_client_info(self, client_info: OAuthClientInformationFull):
        self.client = client_info


def without_token(url: str) -> dict:
    body = json.dumps({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "x", "version": "0"}}}).encode()
    request = urllib.request.Request(url, data=body, method="POST", headers={
        "Content-Type": "application/json", "Accept": "application/json, text/event-stream"})
    try:
        urllib.request.urlopen(request)
        return {"status": 200}
    except urllib.error.HTTPError as e:
        challenge = e.headers.get("WWW-Authenticate", "")
        found = re.search(r'resource_metadata="([^"]+)"', challenge)
        metadata = json.load(urllib.request.urlopen(found.group(1))) if found else None
        return {"status": e.code, "challenge": challenge, "metadata": metadata}


async def main(url: str, issuer: str, client_id: str, secret: str) -> None:
    seen = {"without_token": without_token(url)}
    storage = Memory()
    auth = ClientCredentialsOAuthProvider(
        server_url=url, storage=storage, client_id=client_id, client_secret=secret,
        scope="jacobian:invoke jacobian:read", issuer=issuer)
    async with httpx2.AsyncClient(auth=auth, timeout=60) as http:
        async with Client(streamable_http_client(url, http_client=http), mode="legacy") as client:
            tools = await client.list_tools()
            seen["tools"] = sorted(t.name for t in tools.tools)
            result = await client.call_tool(
                "capability.invoke", {"capability_id": "sat.cnf.construct", "input": {"dimacs": "p cnf 1 1\n1 0\n"}})
            seen["invoked"] = {"is_error": result.is_error, "status": (result.structured_content or {}).get("status")}
    seen["token_type"] = storage.tokens.token_type if storage.tokens else None
    # The token itself never leaves this process; only its claims (not its signature) are reported.
    if storage.tokens:
        import base64
        payload = storage.tokens.access_token.split(".")[1]
        seen["claims"] = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
    print(json.dumps(seen))


if __name__ == "__main__":
    asyncio.run(main(*sys.argv[1:5]))
