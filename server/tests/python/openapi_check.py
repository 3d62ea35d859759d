"""Checks recorded API answers against the server's OpenAPI document with an
independent implementation (openapi-core; it validates the document itself first,
with openapi-spec-validator).

Input (argv[1]): {"document": {...}, "cases": [{"method", "template", "path", "query",
"status", "content_type", "body"}]}. Prints a JSON report: the cases that do not
match, and every documented (method, path, status) no case exercised. Exit status 1
when a case does not match.
"""

import json
import sys

from openapi_core import Config, OpenAPI
from openapi_core.testing import MockRequest, MockResponse


def explain(error):
    """The innermost reasons: openapi-core wraps schema errors in its own."""
    reasons = []
    while error is not None:
        reasons += [e.message for e in getattr(error, "schema_errors", [])]
        reasons.append(f"{type(error).__name__}: {error}")
        error = error.__cause__
    return " <- ".join(reasons)


def main(path):
    with open(path, encoding="utf-8") as f:
        data = json.load(f)
    # openapi-core reads JSON and plain text; CSV is text too (checked as a string).
    config = Config(extra_media_type_deserializers={"text/csv": lambda b, **_: b.decode("utf-8")})
    api = OpenAPI.from_dict(data["document"], config=config)
    failures, seen = [], set()
    for case in data["cases"]:
        where = f'{case["method"].upper()} {case["path"]} -> {case["status"]}'
        request = MockRequest(
            "http://127.0.0.1", case["method"], case["path"], args=case["query"]
        )
        response = MockResponse(
            case["body"].encode("utf-8"),
            status_code=case["status"],
            content_type=case["content_type"].split(";")[0].strip(),
        )
        try:
            api.validate_response(request, response)
        except Exception as e:  # every kind of mismatch is a finding
            failures.append(f"{where}: {explain(e)}")
        seen.add((case["method"], case["template"], str(case["status"])))
    documented = {
        (method, template, status)
        for template, item in data["document"]["paths"].items()
        for method, operation in item.items()
        for status in operation.get("responses", {})
    }
    report = {
        "failures": failures,
        "unexercised": sorted(f"{m} {t} {s}" for m, t, s in documented - seen),
        "undocumented": sorted(f"{m} {t} {s}" for m, t, s in seen - documented),
        "cases": len(data["cases"]),
    }
    print(json.dumps(report, indent=1))
    return 1 if failures or report["undocumented"] else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
