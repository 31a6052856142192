"""Schemathesis hooks for the reference operator's wallet (tests/operator/schemathesis.rs).

Every wallet call must be signed (docs/operator-wallet.openapi.json): this
hook signs each generated request with the test key, as the game server
would, over the exact bytes it sends. A case whose signature headers break
the document (missing, or not matching their pattern: a negative case) is
sent as generated, so that the operator's refusal (401) is checked too.
"""

import hashlib
import hmac
import json
import os
import re
import secrets
import time

import schemathesis
from schemathesis.core import NotSet

KEY_ID = os.environ["AS_CAPONE_OPERATOR_TEST_KEY_ID"]
SECRET = bytes.fromhex(os.environ["AS_CAPONE_OPERATOR_TEST_KEY_HEX"])

# The document's patterns of the four headers.
PATTERNS = {
    "x-signature-key-id": r"[A-Za-z0-9._-]{1,64}",
    "x-signature-timestamp": r"[0-9]{1,15}",
    "x-signature-nonce": r"[0-9a-fA-F]{16,64}",
    "x-signature": r"[0-9a-fA-F]{64}",
}


def _documented(headers):
    present = {str(k).lower(): v for k, v in (headers or {}).items()}
    return all(
        isinstance(present.get(name), str) and re.fullmatch(pattern, present[name]) is not None
        for name, pattern in PATTERNS.items()
    )


@schemathesis.hook
def before_call(ctx, case, kwargs):
    if not case.path.startswith("/wallet/") or not _documented(case.headers):
        return
    if isinstance(case.body, NotSet):
        body = b""
    elif isinstance(case.body, bytes):
        body = case.body
    else:
        body = json.dumps(case.body).encode("utf-8")
    # The exact bytes signed are the bytes sent.
    kwargs["data"] = body
    timestamp = str(int(time.time() * 1000))
    nonce = secrets.token_hex(16)
    text = f"{case.method.upper()}\n{case.path}\n{timestamp}\n{nonce}\n".encode() + body
    signature = hmac.new(SECRET, text, hashlib.sha256).hexdigest()
    for name in list(case.headers):
        if name.lower() in PATTERNS:
            del case.headers[name]
    case.headers.update(
        {
            "x-signature-key-id": KEY_ID,
            "x-signature-timestamp": timestamp,
            "x-signature-nonce": nonce,
            "x-signature": signature,
        }
    )
