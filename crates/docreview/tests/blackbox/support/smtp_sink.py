"""A real SMTP server for the mail tests (aiosmtpd): each message it accepts becomes one JSON
file in a directory, {mailFrom, rcptTos, headers, text, html}, the headers unfolded and the
parts decoded by Python's email package (an independent reading of what docreview sent).

Usage: smtp_sink.py DIRECTORY PORT   (PORT 0 picks one); prints "listening PORT" when ready,
and stops when its standard input closes.
"""

import asyncio
import email
import email.policy
import json
import os
import sys
import threading

from aiosmtpd.smtp import SMTP


class Sink:
    def __init__(self, directory):
        self.directory = directory
        self.count = 0

    async def handle_DATA(self, server, session, envelope):
        message = email.message_from_bytes(envelope.original_content, policy=email.policy.default)
        record = {
            "mailFrom": envelope.mail_from,
            "rcptTos": list(envelope.rcpt_tos),
            "headers": {name: str(value) for name, value in message.items()},
            "text": None,
            "html": None,
        }
        for part in message.walk():
            kind = part.get_content_type()
            if kind == "text/plain" and record["text"] is None:
                record["text"] = part.get_content()
            elif kind == "text/html" and record["html"] is None:
                record["html"] = part.get_content()
        self.count += 1
        name = f"{os.getpid()}-{self.count:05d}"
        temporary = os.path.join(self.directory, name + ".tmp")
        with open(temporary, "w", encoding="utf-8") as out:
            json.dump(record, out)
        os.replace(temporary, os.path.join(self.directory, name + ".json"))
        return "250 Message accepted"


async def main():
    directory, port = sys.argv[1], int(sys.argv[2])
    handler = Sink(directory)
    loop = asyncio.get_running_loop()
    server = await loop.create_server(lambda: SMTP(handler), "127.0.0.1", port, reuse_address=True)
    print("listening", server.sockets[0].getsockname()[1], flush=True)
    closed = loop.create_future()
    # Stop when the test closes standard input (or dies).
    threading.Thread(
        target=lambda: (sys.stdin.read(), loop.call_soon_threadsafe(closed.set_result, None)),
        daemon=True,
    ).start()
    await closed
    server.close()


asyncio.run(main())
