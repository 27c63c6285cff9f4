"""Drives `docreview mcp` with the MCP Python SDK (a client this project did not write): lists
the tools, uploads a document of Chinese text and pages through it, and checks that every answer
is whole JSON of at most 25,000 characters and that a misspelled argument is refused by name.
Usage: mcp-client.py BINARY (DOCREVIEW_URL and DOCREVIEW_TOKEN set)."""

import asyncio
import json
import os
import sys

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

LIMIT = 25_000


def parsed(result) -> dict:
    text = result.content[0].text
    if len(text) > LIMIT:
        sys.exit(f"an answer of {len(text)} characters")
    return json.loads(text)


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
            if any(tool.input_schema.get("additionalProperties") is not False for tool in tools.tools):
                sys.exit("a tool's schema takes arguments it does not name")
            size = sum(len(tool.model_dump_json(exclude_none=True)) for tool in tools.tools)
            print(f"tool definitions: {size} characters")

            paragraphs = "".join(f"<p>{'这是一个测试段落，用于检查分页。' * 20}{i}</p>" for i in range(150))
            html = f"<!doctype html><html><body><h1 id='zh'>中文</h1>{paragraphs}</body></html>"
            result = await session.call_tool("document_write", {"method": "upload", "html": html, "title": "中文"})
            if result.is_error:
                sys.exit(f"document_write upload failed: {result.content}")
            review_id = parsed(result)["reviewId"]

            arguments = {"method": "text", "review_id": review_id}
            pages, at = 0, 0
            while True:
                result = await session.call_tool("reviews_read", arguments)
                page = parsed(result)
                if result.is_error or page["start"] != at:
                    sys.exit(f"text page {pages}: {page}")
                pages, at = pages + 1, page["end"]
                if page["nextOffset"] is None:
                    break
                arguments["offset"] = page["nextOffset"]
            print(f"text: {at} characters in {pages} pages")
            if pages != 3:
                sys.exit("a page of Chinese holds 20,000 characters")

            result = await session.call_tool("reviews_read", {"method": "text", "review_id": review_id, "sectionID": "zh"})
            refusal = parsed(result)
            if not result.is_error or refusal.get("argument") != "sectionID":
                sys.exit(f"a misspelled argument is refused by name: {refusal}")
            print("refused:", refusal["message"])

            result = await session.call_tool("reviews_read", {"method": "list"})
            if result.is_error:
                sys.exit(f"reviews_read list failed: {result.content}")
            listed = parsed(result)
            print("reviews_read list:", len(listed["reviews"]), "documents")


asyncio.run(main(sys.argv[1]))
