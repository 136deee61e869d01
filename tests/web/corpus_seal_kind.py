"""Differential-corpus cases of the seal's fixed values (issue 47, item 8b; docs/format.md
"Seal"): a seal is `schema` "crovia.seal.v1", `seal_kind` "substrate_batch" and
`seal_family_version` "crovia-seal-family/1", as the reference seal is; a seal of another schema,
kind or family is another format whose root and leaf count this one cannot read, and is refused
at `receipt_shape` by `crovia verify` and the page alike, even signed by the pinned key.

Each refused seal is signed again by TEST_KEY (its holder can sign anything), so the seal
signature holds and only the value can be what refuses it. The reference receipt, pinned to its
own key, is the control that the values are the seed's.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.vectors.make_vectors import TEST_KEY, build_ledger, seed_receipt
from tests.web import corpus as c
from tests.web.corpus_eras import resealed

OTHER_VALUES = (
    ("schema", "crovia.seal.v2"),
    ("schema", ""),
    ("seal_kind", "receipt_batch"),
    ("seal_kind", ""),
    ("seal_kind", 1),
    ("seal_family_version", "crovia-seal-family/2"),
    ("seal_family_version", None),
)


def hostile_cases(work: Path, pki: Any) -> list[c.Expected]:
    """The cases, from a three-leaf ledger in `work` (`pki` is not needed)."""
    del pki
    receipt = build_ledger(work / "seal-kind", 3)[1]
    pin = c.trust_root(TEST_KEY)
    seed = seed_receipt()
    cases = [
        c.Expected("our seal", receipt, pin, "valid", None),
        c.Expected("the reference seal, pinned to its key",
                   seed, c.trust_root(seed["seal"]["public_key_hex"]), "valid", None),
        # signer_version is free text (the seed's "1.1.0", ours "crovia-ledger/0.1.0")
        c.Expected("our seal, another signer_version",
                   resealed(receipt, TEST_KEY, signer_version="9.9.9"), pin, "valid", None),
    ]  # fmt: skip
    for name, value in OTHER_VALUES:
        changed = resealed(receipt, TEST_KEY, **{name: value})
        cases.append(
            c.Expected(f"a seal of {name} {value!r}, signed", changed, pin, "invalid",
                       "receipt_shape")
        )  # fmt: skip
    return cases
