"""Schemathesis hooks for the reference operator's wallet (tests/operator/schemathesis.rs).

Every wallet call must be signed (docs/operator-wallet.openapi.json): this
hook signs each generated request with the test key, over the exact bytes it
sends and the header values as it sends them (docs/operator-integration.md,
"Signatures"). A case whose signature headers break the document (missing,
or not matching their pattern: a negative case) is sent as generated, so
that the operator's refusal (401) is checked too.

The signed cases do not always spell their headers the same way: they go
through every spelling of the nonce (lower and upper case, 16 to 64 digits)
and of the timestamp (with leading zeros) that the document's own patterns
allow, read from the document, so that a spelling the document allows and
the operator refuses fails the run (`positive_data_acceptance`).

The check `answers_are_signed` verifies the signature of every answer of a
wallet path, whatever its status or method (a 405 included), bound to the
request's nonce as the document says.
"""

import hashlib
import hmac
import itertools
import json
import os
import re
import secrets
import time

import schemathesis
from schemathesis.core import NotSet

KEY_ID = os.environ["AS_CAPONE_OPERATOR_TEST_KEY_ID"]
SECRET = bytes.fromhex(os.environ["AS_CAPONE_OPERATOR_TEST_KEY_HEX"])
DOCUMENT = os.environ["AS_CAPONE_OPERATOR_DOCUMENT"]

# The document's patterns of the four request headers.
with open(DOCUMENT, encoding="utf-8") as f:
    _parameters = json.load(f)["components"]["parameters"]
PATTERNS = {p["name"]: p["schema"]["pattern"] for p in _parameters.values() if p["in"] == "header"}
assert set(PATTERNS) == {"x-signature-key-id", "x-signature-timestamp", "x-signature-nonce", "x-signature"}, PATTERNS


def _documented_value(name, value):
    return isinstance(value, str) and re.search(PATTERNS[name], value) is not None


def _documented(headers):
    present = {str(k).lower(): v for k, v in (headers or {}).items()}
    return all(_documented_value(name, present.get(name)) for name in PATTERNS)


def _nonce_spellings():
    """Every spelling tried, in turn: lengths at the pattern's bounds, both cases."""
    for digits, upper in itertools.cycle([(32, False), (32, True), (16, False), (64, False), (64, True)]):
        nonce = secrets.token_hex(digits // 2)
        yield nonce.upper() if upper else nonce


def _timestamp_spellings():
    for zeros in itertools.cycle([0, 1, 2]):
        yield "0" * zeros + str(int(time.time() * 1000))


_NONCES = _nonce_spellings()
_TIMESTAMPS = _timestamp_spellings()


def _next_documented(spellings, name):
    """The next spelling the document allows (the plain one always is)."""
    for _ in range(8):
        value = next(spellings)
        if _documented_value(name, value):
            return value
    raise AssertionError(f"the document's pattern of {name} allows no spelling tried: {PATTERNS[name]}")


def _body_bytes(case):
    if isinstance(case.body, NotSet):
        return b""
    if isinstance(case.body, bytes):
        return case.body
    return json.dumps(case.body).encode("utf-8")


@schemathesis.hook
def before_call(ctx, case, kwargs):
    if not case.path.startswith("/wallet/") or not _documented(case.headers):
        return
    body = _body_bytes(case)
    # The exact bytes signed are the bytes sent.
    kwargs["data"] = body
    timestamp = _next_documented(_TIMESTAMPS, "x-signature-timestamp")
    nonce = _next_documented(_NONCES, "x-signature-nonce")
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


def _header(headers, name):
    for key, value in (headers or {}).items():
        if str(key).lower() == name:
            return value[0] if isinstance(value, list) else value
    return None


@schemathesis.check
def answers_are_signed(ctx, response, case):
    """Every answer of a wallet path is signed and bound to its request."""
    path = case.path
    if not path.startswith("/wallet/"):
        return None
    sent = response.request.headers
    request_nonce = _header(sent, "x-signature-nonce")
    if request_nonce is None:
        request_nonce = ""
    elif not re.fullmatch(r"[0-9A-Za-z]*", request_nonce):
        # A negative case's nonce that is not plain text: the operator binds
        # its answer to it as it read it; nothing to compare here.
        return None
    got = {name: _header(response.headers, name) for name in PATTERNS}
    missing = [name for name, value in got.items() if value is None]
    if missing:
        raise AssertionError(f"{response.status_code} answer to {response.request.method} {path} is not signed: no {missing}")
    method = response.request.method.upper()
    text = (
        f"RESPONSE\n{method} {path}\n{response.status_code}\n{request_nonce}\n"
        f"{got['x-signature-timestamp']}\n{got['x-signature-nonce']}\n"
    ).encode() + response.content
    want = hmac.new(SECRET, text, hashlib.sha256).hexdigest()
    if not hmac.compare_digest(want, got["x-signature"]):
        raise AssertionError(
            f"{response.status_code} answer to {method} {path}: its signature does not match the documented text"
        )
    return None
