"""The notify key and the Standard Webhooks signatures made with it.

Webhooks are signed with an Ed25519 key of their own (CROVIA_NOTIFY_KEY_FILE, a PKCS#8 file of
mode 0600 made at first use, as the ledger's key is), never the ledger's: a receiver pins it as
`whpk_` and the base64 of its 32 public bytes (the serialisation of the Standard Webhooks
specification), printed by `crovia notify key` and published by `crovia publish` in
`webhook_key.txt`. Each delivery is signed as the specification says: the signed content is
`<webhook-id>.<webhook-timestamp>.<body>`, the signature `v1a,` and the base64 of its Ed25519
signature. A webhook configured with a `secret_file` (a `whsec_` secret) is signed `v1` too,
by the `standardwebhooks` library (HMAC-SHA256), in the same header.
"""

from __future__ import annotations

import base64
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import nacl.signing

PUBLIC_PREFIX = "whpk_"
SIGNED_WITH = "v1a"


def notify_key(path: Path, create: bool = True) -> nacl.signing.SigningKey:
    """The notify key at `path`, made there first (mode 0600, a 0700 directory) when `create`
    and there is none. Raises KeyFileError as the ledger's key loader does (mode, owner, kind)."""
    from ledger.keys import generate_signing_key, load_signing_key

    if create and not Path(path).exists() and not Path(path).is_symlink():
        return generate_signing_key(path)
    return load_signing_key(path)


def public_key_text(key: nacl.signing.SigningKey) -> str:
    """`whpk_` and the base64 of the public key's 32 bytes."""
    return PUBLIC_PREFIX + base64.b64encode(bytes(key.verify_key)).decode("ascii")


def signed_content(msg_id: str, timestamp: int, body: bytes) -> bytes:
    """What a Standard Webhooks signature covers: `msg_id.timestamp.body`."""
    return f"{msg_id}.{timestamp}.".encode("ascii") + body


def signature_header(
    key: nacl.signing.SigningKey, msg_id: str, timestamp: int, body: bytes, secret: str = ""
) -> str:
    """The `webhook-signature` header: `v1a,<base64>` and, with a `whsec_` secret, a `v1`
    signature before it (the specification's space-separated list)."""
    signature = key.sign(signed_content(msg_id, timestamp, body)).signature
    value = f"{SIGNED_WITH},{base64.b64encode(signature).decode('ascii')}"
    if secret:
        from standardwebhooks import Webhook

        moment = datetime.fromtimestamp(timestamp, tz=UTC)
        value = f"{Webhook(secret).sign(msg_id, moment, body.decode('utf-8'))} {value}"
    return value


KEY_FILE_PUBLISHED = "webhook_key.txt"


def write_public_key(context: Any) -> None:
    """A writer of `crovia publish`: the notify key's public form (`whpk_...` and a newline) in
    `webhook_key.txt`, so receivers fetch the key to pin from where the log is; nothing when no
    notify key was made yet (publishing makes no key)."""
    from crovia_spider.options import resolve_path, setting

    path = resolve_path(setting("CROVIA_NOTIFY_KEY_FILE"))  # as settings_from_env reads it
    if not path.exists():
        return
    context.out.write(
        KEY_FILE_PUBLISHED, (public_key_text(notify_key(path, create=False)) + "\n").encode()
    )
