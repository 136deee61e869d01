"""The page says how many rotation records it checked, each once: a receipt after a rotation
whose own `key_rotations` and the site's trust root hold the same record is "1 rotation
record(s) checked" (it said 2), as `crovia verify` follows one rotation. A trust root holding a
later rotation too adds it: the records checked are the distinct ones of both lists."""

from __future__ import annotations

import base64
import json
import subprocess
from pathlib import Path

import pytest

from ledger.receipt import verify_receipt_bytes
from tests.crawl import PROJECT_ROOT
from tests.web import corpus as c
from tests.web.corpus_eras import THIRD_KEY
from tests.web.test_differential import NODE

pytestmark = pytest.mark.slow

# The page's scripts under Node, as tests/web/core_runner.js loads them; prints each case's
# key_rotation check message and verdict.
RUNNER = """
const fs = require("fs"), path = require("path"), vm = require("vm");
const PAGE = path.join(process.argv[1], "crovia_spider", "web", "verifier");
for (const name of ["vendor/pkijs.bundle.js", "verify-core.js", "verify-stamps.js"]) {
  vm.runInThisContext(fs.readFileSync(path.join(PAGE, name), "utf-8"), { filename: name });
}
(async () => {
  const out = [];
  for (const item of JSON.parse(fs.readFileSync(0, "utf-8"))) {
    const bytes = Uint8Array.from(Buffer.from(item.data, "base64"));
    const report = await CroviaVerify.verifyReceiptBytes(bytes, item.pin, { headers: [] });
    const check = report.checks.find((k) => k.name === "key_rotation");
    out.push([report.verdict, check ? check.message : null]);
  }
  process.stdout.write(JSON.stringify(out));
})().catch((err) => { process.stderr.write(String(err.stack || err)); process.exit(1); });
"""


def page_rotations(cases: list[tuple[bytes, dict]]) -> list[list]:
    payload = [{"data": base64.b64encode(data).decode(), "pin": pin} for data, pin in cases]
    done = subprocess.run(
        [str(NODE), "-e", RUNNER, str(PROJECT_ROOT)],
        input=json.dumps(payload),
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout)


def test_the_page_counts_each_rotation_record_once(tmp_path: Path) -> None:
    rotated = c.rotated_ledger(tmp_path / "ledger")
    receipt = c.receipt_bytes(rotated.after[0])
    assert rotated.after[0]["key_rotations"] == [rotated.record]
    # A later hand-over from NEW_KEY to THIRD_KEY, as the site's trust root would list it.
    later = c.signed_record(
        dict(
            rotated.record,
            old_public_key_hex=c.public_hex(c.NEW_KEY),
            old_key_id=rotated.record["new_key_id"],
            leaf_count=rotated.after[0]["seal"]["leaf_count"],
            rotated_at="2099-01-01T00:00:00Z",
        ),
        THIRD_KEY,
        old_signer=c.NEW_KEY,
    )
    cases = [
        (receipt, c.trust_root(c.NEW_KEY, [rotated.record])),  # the same record in both
        (receipt, None),  # the receipt's own record alone
        (receipt, c.trust_root(THIRD_KEY, [rotated.record, later])),  # and one after it
    ]
    found = page_rotations(cases)
    assert found[0] == ["valid", "1 rotation record(s) checked"], found
    assert found[1] == ["unpinned", "1 rotation record(s) checked"], found
    assert found[2] == ["valid", "2 rotation record(s) checked"], found
    # crovia verify follows the same one rotation from the ledger's first key to the seal's.
    assert verify_receipt_bytes(receipt, pubkey_hex=c.public_hex(c.NEW_KEY)).key_rotations == 1
