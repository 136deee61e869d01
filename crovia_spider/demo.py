"""`make demo`: the whole path offline, in data/demo/ (or `--dir DIR`), started afresh each run.

Serves the sample feeds in demo/feeds on 127.0.0.1, crawls them with `scrapy crawl vendor_press`
into a fresh ledger under a new key, seals, has the seal stamped by a local RFC 3161 TSA (OpenSSL's
own `openssl ts -reply` on 127.0.0.1, crovia_spider/demo_tsa.py) with `crovia stamp`, exports one
receipt with `crovia prove` and checks it with `crovia verify`, pinning the demo key and the TSA's
root, so the earliest time vouched for by a pinned third party is shown. Every step is the real
command a user would type. It ends by printing the key (in full, and its key id) and the commands
to go on with, each naming the demo's files, so they work when pasted into a new shell. The folder
keeps the ledger, key, trust root, public key (public_key.hex), the TSA's root certificate and the
receipt (the README's session reads them) until the next `make demo` replaces it.
"""

from __future__ import annotations

import argparse
import functools
import http.server
import json
import os
import shlex
import shutil
import subprocess
import sys
import threading
from pathlib import Path

from crovia_spider.demo_tsa import OpenSslTsa, TestPki
from ledger.keys import key_id, load_signing_key
from ledger.store import Ledger, find_leaves

PROJECT_ROOT = Path(__file__).resolve().parent.parent
DEMO_FEEDS = PROJECT_ROOT / "demo" / "feeds"
DEMO_DIR = Path("data") / "demo"  # under the project root, ignored by git (data/)
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


class _Server(http.server.ThreadingHTTPServer):
    # The default backlog of 5 drops SYNs when a crawl opens several connections at once, and the
    # client's retransmit a second later stalls the crawl (the benches serve from here too).
    request_queue_size = 128


def serve(directory: Path) -> http.server.ThreadingHTTPServer:
    handler = functools.partial(_QuietHandler, directory=str(directory))
    server = _Server(("127.0.0.1", 0), handler)
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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m crovia_spider.demo", description=__doc__)
    parser.add_argument(
        "--dir", type=Path, default=None, help=f"where to work (default: {DEMO_DIR}/ here)"
    )
    args = parser.parse_args(argv)
    work = (args.dir or PROJECT_ROOT / DEMO_DIR).absolute()
    if work.exists():  # the demo's own folder, from a previous run: start afresh
        shutil.rmtree(work)
    work.mkdir(parents=True)
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
        pubkey = make_key(work, env)
        axiom_id, title = crawl(work, env)
        tsa_root = stamp(work, env)
        receipt_path = work / "receipt.json"
        run(crovia(), "prove", axiom_id, "--out", str(receipt_path), env=env)
        print(f"5. receipt for {title[:60]!r} -> {receipt_path}")
        verdict = run(
            crovia(), "verify", str(receipt_path), "--pubkey", pubkey,
            "--tsa-root", str(tsa_root), env=env,
        )  # fmt: skip
        lines = [line.strip() for line in verdict.stdout.strip().splitlines()]
        print(f"6. crovia verify: {lines[0]}")
        for line in lines[1:]:
            if line.startswith(("signed by:", "rfc3161:", "earliest time vouched for")):
                print(f"   {line}")
    finally:
        server.shutdown()
    print_follow_up(work, receipt_path, axiom_id, pubkey, tsa_root)
    return 0


def make_key(work: Path, env: dict[str, str]) -> str:
    """Create the demo's signing key and trust root; print and return the public key (hex)."""
    key_file = Path(env["CROVIA_SIGNING_KEY_FILE"])
    trust_root = work / "trust_root.json"
    run(crovia(), "keygen", "--out", str(key_file), "--trust-root", str(trust_root), env=env)
    verify_key = load_signing_key(key_file).verify_key
    print(f"2. a throwaway signing key in {key_file}")
    print(f"   public key: {bytes(verify_key).hex()}")
    print(f"   key id:     {key_id(bytes(verify_key))}")
    print(f"   trust root: {trust_root}")
    (work / "public_key.hex").write_text(bytes(verify_key).hex() + "\n", encoding="ascii")
    return bytes(verify_key).hex()


def crawl(work: Path, env: dict[str, str]) -> tuple[str, str]:
    """Crawl the sample feeds (the crawl seals at its end); the first item's axiom id and title."""
    run(str(BIN / "scrapy"), "crawl", "vendor_press", "-s", "DOWNLOAD_DELAY=0", env=env)
    stats = json.loads(run(crovia(), "stats", "--json", env=env).stdout)
    print(
        f"3. crawled into {work / 'ledger'}: {stats['leaves']} envelopes, {stats['seals']} seal(s)"
    )
    first_item = next(find_leaves(work / "ledger"))  # leaf 0 is the first feed's fetch record
    with Ledger.open(work / "ledger") as ledger:
        envelope = ledger.envelope(first_item.leaf_index)
    return envelope["axiom_id"], envelope["body"]["title"]


def stamp(work: Path, env: dict[str, str]) -> Path:
    """`crovia stamp` against a throwaway OpenSSL TSA on 127.0.0.1; returns its root (PEM)."""
    pki = TestPki(work / "tsa", name="Demo")
    with OpenSslTsa(pki) as tsa:
        env = env | {"CROVIA_TSA_URLS": tsa.url, "CROVIA_TSA_ROOTS": str(pki.root)}
        out = run(crovia(), "stamp", env=env).stdout.strip().splitlines()
    print(f"4. crovia stamp, local TSA {tsa.url} (root certificate {pki.root}):")
    print(f"   {out[-1].strip() if out else 'done'}")
    # The trust root again, now that there is a TSA root to trust: it lists it (`tsa_roots`).
    run(
        crovia(), "pubkey", "--key", env["CROVIA_SIGNING_KEY_FILE"], "--trust-root",
        str(work / "trust_root.json"), "--force", env=env | {"CROVIA_TSA_ROOTS": str(pki.root)},
    )  # fmt: skip
    return pki.root


def print_follow_up(work: Path, receipt: Path, axiom_id: str, pubkey: str, tsa_root: Path) -> None:
    """The commands to go on with, exactly as they work when pasted into a new shell here."""
    ledger = f"--ledger-dir {shlex.quote(str(work / 'ledger'))}"
    command = shlex.quote(crovia_for_shell())
    print(f"\nThe demo ledger, key, TSA root and receipt stay in {work}. Try, in a new shell here:")
    for line in (
        f"{command} find {ledger}",
        f"{command} stats {ledger}",
        f"{command} prove {axiom_id} {ledger}",
        f"{command} verify {shlex.quote(str(receipt))} --pubkey {pubkey}"
        f" --tsa-root {shlex.quote(str(tsa_root))}",
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
