"""Verifies a DSSE envelope with an independent implementation (securesystemslib).

Usage: dsse_check.py ENVELOPE.json KEY.pub.pem KEYID. Prints a JSON verdict with the
payload's SHA-256 (the bundle id) and exits 0 when a signature by the key verifies,
1 when none does. This is what a reader without our tools does to check a submission.
"""

import hashlib
import json
import sys

from cryptography.hazmat.primitives.serialization import load_pem_public_key
from securesystemslib.dsse import Envelope
from securesystemslib.exceptions import VerificationError
from securesystemslib.signer import SSlibKey


def main(envelope_path, key_path, keyid):
    with open(envelope_path, "rb") as f:
        envelope = Envelope.from_dict(json.load(f))
    with open(key_path, "rb") as f:
        key = SSlibKey.from_crypto(load_pem_public_key(f.read()), keyid=keyid)
    verdict = {
        "payload_type": envelope.payload_type,
        "payload_sha256": hashlib.sha256(envelope.payload).hexdigest(),
    }
    try:
        envelope.verify([key], 1)
    except VerificationError as e:
        print(json.dumps({**verdict, "verified": False, "reason": str(e)}))
        return 1
    print(json.dumps({**verdict, "verified": True}))
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:4]))
