"""Drives `docreview mcp` with the MCP Python SDK (a client this project did not write): lists
the tools and calls one. Usage: mcp-client.py BINARY (DOCREVIEW_URL and DOCREVIEW_TOKEN set)."""

import asyncio
import json
import os
import sys

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client


async def main(binary: str) -> None:
    server = StdioServerParameters(command=binary, args=["mcp"], env=dict(os.environ))
    async with stdio_client(server) as (read, write):
        async with ClientSession(read, write) as session:
            await session.initialize()
            tools = await session.list_tools()
            names = sorted(tool.name for tool in tools.tools)
            print("tools:", ", ".join(names))
            expected = {"reviews_read", "run_write", "comment_write", "document_write"}
            if not expected <= set(names):
                sys.exit(f"missing tools: {expected - set(names)}")
            result = await session.call_tool("reviews_read", {"method": "list"})
            if result.is_error:
                sys.exit(f"reviews_read list failed: {result.content}")
            listed = json.loads(result.content[0].text)
            print("reviews_read list:", len(listed["reviews"]), "documents")


asyncio.run(main(sys.argv[1]))
