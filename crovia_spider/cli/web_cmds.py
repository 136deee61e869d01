"""`crovia serve`: serve a published directory read-only, with the browser verifier at /v/<id>.

Twisted is imported inside the handler, so `crovia --help` and `crovia verify` never load it.
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

from crovia_spider.cli import EXIT_OK, EXIT_USAGE


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "serve",
        help="serve a published directory read-only (the verifier page at /v/<axiom_id>)",
        description=(
            "Serve DIR (written by `crovia publish`) over HTTP, read-only: files below DIR only,"
            " no listings, a strict Content-Security-Policy; /v/<axiom_id> opens the verifier."
            " Stops on Ctrl-C or SIGTERM."
        ),
    )
    parser.add_argument("directory", type=Path, metavar="DIR", help="the published directory")
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on (%(default)s)")
    parser.add_argument(
        "--port", type=int, default=8000, help="TCP port; 0 picks a free one (%(default)s)"
    )
    # Defaults of crovia_spider/web/bounded.py, not imported here: it would load Twisted.
    parser.add_argument(
        "--request-seconds",
        type=_positive(float),
        default=20.0,
        metavar="S",
        help="seconds a request may take to arrive, head and all, from the connection's start"
        " or the previous response, whatever bytes come meanwhile (%(default)s)",
    )
    parser.add_argument(
        "--max-connections",
        type=_positive(int),
        default=256,
        metavar="N",
        help="connections open at once; one past it is closed on accept (%(default)s)",
    )
    parser.add_argument(
        "--max-per-address",
        type=_positive(int),
        default=32,
        metavar="N",
        help="connections open at once from one client address (%(default)s)",
    )
    parser.set_defaults(handler=cmd_serve)


def _positive(kind: type) -> object:
    def parse(text: str) -> float | int:
        value = kind(text)
        if not (value > 0 and math.isfinite(value)):
            raise argparse.ArgumentTypeError(f"{text} is not a number above 0")
        return value

    parse.__name__ = kind.__name__
    return parse


def cmd_serve(args: argparse.Namespace) -> int:
    if not args.directory.is_dir():
        print(f"crovia serve: error: {args.directory} is not a directory", file=sys.stderr)
        return EXIT_USAGE
    from twisted.internet import reactor

    from crovia_spider.web.serve import newest_item_receipt, receipt_words, site

    served = site(
        args.directory,
        request_seconds=args.request_seconds,
        max_connections=args.max_connections,
        max_per_address=args.max_per_address,
    )
    port = reactor.listenTCP(args.port, served, interface=args.host)
    address = port.getHost()
    host = f"[{address.host}]" if ":" in address.host else address.host
    print(f"serving {args.directory} at http://{host}:{address.port}/", flush=True)
    newest, kind = newest_item_receipt(args.directory)
    if newest:
        what = receipt_words(kind)
        print(f"verify the newest {what}: http://{host}:{address.port}/v/{newest}", flush=True)
    else:
        print(f"verify a receipt: http://{host}:{address.port}/v/AXIOM_ID", flush=True)
    reactor.run()
    return EXIT_OK
