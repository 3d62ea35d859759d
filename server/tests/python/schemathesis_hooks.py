"""Schemathesis hooks for the RExBench API (loaded with SCHEMATHESIS_HOOKS).

A result bundle is sent as `application/gzip`, a media type schemathesis has no
serializer for: this one sends the generated body's bytes as they are, so that the
submissions endpoint is fuzzed too (server/tests/it/schemathesis.rs).
"""

import schemathesis
from schemathesis.transport.serialization import serialize_binary


@schemathesis.serializer("application/gzip")
def gzip_body(ctx, value):
    return {"data": serialize_binary(value)}
