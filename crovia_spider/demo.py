"""`make demo`: the whole path offline, in a throwaway directory.

Serves the sample feeds in demo/feeds on 127.0.0.1, crawls them with `scrapy crawl vendor_press`
into a fresh ledger under a new key, seals, exports one receipt with `crovia prove` and checks
it with `crovia verify`, pinning the demo key. Every step is the real command a user would type.
It ends by printing the key (in full, and its key id) and the commands to go on with, each naming
the demo's ledger directory, so they work when pasted into a new shell.
"""

from __future__ import annotations

import functools
import http.server
import json
import os
import shlex
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

from ledger.keys import key_id, load_signing_key
from ledger.store import Ledger, find_leaves

PROJECT_ROOT = Path(__file__).resolve().parent.parent
DEMO_FEEDS = PROJECT_ROOT / "demo" / "feeds"
BIN = Path(sys.executable).parent
VENDORS = {
    "arxiv_cs_ai.xml": "arxiv_cs_ai",
    "openai_news.xml": "openai",
    "huggingface_blog.xml": "huggingface",
    "aws_blog.atom": "aws_blog",
}


class _QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:  # keep the demo's output short
        pass


def serve(directory: Path) -> http.server.ThreadingHTTPServer:
    handler = functools.partial(_QuietHandler, directory=str(directory))
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def write_feeds_file(path: Path, port: int) -> None:
    entries = [
        f'[[feeds]]\nvendor = "{vendor}"\nurl = "http://127.0.0.1:{port}/{name}"\n'
        for name, vendor in VENDORS.items()
    ]
    path.write_text("\n".join(entries), encoding="utf-8")


def run(*argv: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """Run one project command; stop the demo with its output if it fails."""
    proc = subprocess.run(argv, cwd=PROJECT_ROOT, env=env, capture_output=True, text=True)
    if proc.returncode != 0:
        sys.stderr.write(f"demo: {' '.join(argv)} exited {proc.returncode}\n")
        sys.stderr.write(proc.stdout + proc.stderr)
        raise SystemExit(proc.returncode)
    return proc


def main() -> int:
    work = Path(tempfile.mkdtemp(prefix="crovia-demo-"))
    server = serve(DEMO_FEEDS)
    env = dict(os.environ)
    env.update(
        CROVIA_FEEDS_FILE=str(work / "feeds.toml"),
        CROVIA_LEDGER_DIR=str(work / "ledger"),
        CROVIA_SIGNING_KEY_FILE=str(work / "keys" / "signing.key"),
    )
    write_feeds_file(work / "feeds.toml", server.server_address[1])
    print(f"1. serving {len(VENDORS)} sample feeds on http://127.0.0.1:{server.server_address[1]}/")
    try:
        pubkey = make_key(env)
        receipt_path, axiom_id = crawl_and_prove(work, env)
        verdict = run(crovia(), "verify", str(receipt_path), "--pubkey", pubkey, env=env)
        print(f"5. crovia verify: {verdict.stdout.strip().splitlines()[-1]}")
    finally:
        server.shutdown()
    print_follow_up(work, receipt_path, axiom_id, pubkey)
    return 0


def make_key(env: dict[str, str]) -> str:
    """Create the demo's signing key; print and return its full public key (hex)."""
    key_file = Path(env["CROVIA_SIGNING_KEY_FILE"])
    run(crovia(), "keygen", "--out", str(key_file), env=env)
    verify_key = load_signing_key(key_file).verify_key
    print(f"2. a throwaway signing key in {key_file}")
    print(f"   public key: {bytes(verify_key).hex()}")
    print(f"   key id:     {key_id(bytes(verify_key))}")
    return bytes(verify_key).hex()


def crawl_and_prove(work: Path, env: dict[str, str]) -> tuple[Path, str]:
    """Crawl the sample feeds, export the first item's receipt; return its path and axiom id."""
    run(str(BIN / "scrapy"), "crawl", "vendor_press", "-s", "DOWNLOAD_DELAY=0", env=env)
    stats = json.loads(run(crovia(), "stats", "--json", env=env).stdout)
    print(
        f"3. crawled into {work / 'ledger'}: {stats['leaves']} envelopes, {stats['seals']} seal(s)"
    )
    first_item = next(find_leaves(work / "ledger"))  # leaf 0 is the first feed's fetch record
    with Ledger.open(work / "ledger") as ledger:
        envelope = ledger.envelope(first_item.leaf_index)
    receipt = run(crovia(), "prove", envelope["axiom_id"], env=env).stdout
    receipt_path = work / "receipt.json"
    receipt_path.write_text(receipt, encoding="utf-8")
    print(f"4. receipt for {envelope['body']['title'][:60]!r} -> {receipt_path}")
    return receipt_path, envelope["axiom_id"]


def print_follow_up(work: Path, receipt: Path, axiom_id: str, pubkey: str) -> None:
    """The commands to go on with, exactly as they work when pasted into a new shell here."""
    ledger = f"--ledger-dir {shlex.quote(str(work / 'ledger'))}"
    command = shlex.quote(crovia_for_shell())
    print(f"\nThe demo ledger, key and receipt stay in {work}. Try, in a new shell here:")
    for line in (
        f"{command} find {ledger}",
        f"{command} stats {ledger}",
        f"{command} prove {axiom_id} {ledger}",
        f"{command} verify {shlex.quote(str(receipt))} --pubkey {pubkey}",
        f"{command} audit {ledger} --pubkey {pubkey}",
    ):
        print(f"  {line}")


def crovia() -> str:
    """The `crovia` of this interpreter's environment."""
    return str(BIN / "crovia")


def crovia_for_shell() -> str:
    """`crovia` as a user here would type it: relative when it is below the working directory
    (`.venv/bin/crovia` after `make demo`), else its absolute path."""
    path = Path(crovia())
    try:
        relative = path.relative_to(Path.cwd())
    except ValueError:
        return str(path)
    return str(relative) if relative.parent != Path() else f"./{relative}"


if __name__ == "__main__":
    sys.exit(main())
