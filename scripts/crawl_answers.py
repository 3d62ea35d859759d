"""Writes every answer a running server gives, one file per URL, for scripts/same-answers.

It starts from the site's fixed pages and API answers, follows every link a page or an
answer names on the same site (pages, runs, artifacts, envelopes, parity views, query
variants), and asks each agent, task and run of the JSON API too. Each file holds the
status, the headers that say what the answer is and how it may be cached, and the body;
the islands' digest in `/pkg/<digest>/` is written as `/pkg/DIGEST/`.

With a third argument, the file `rexbench-server pages` writes (the router's pages, one
path a line, `{name}` where a page takes a value), the crawl starts from every page that
takes no value too, and fails, naming them, if a page of the router was never reached:
the list of pages is the router's, not kept here.
"""

import json
import os
import re
import sys
import urllib.error
import urllib.parse
import urllib.request
from pathlib import Path

HEADERS = ["content-type", "cache-control", "etag", "content-security-policy", "x-content-type-options"]
START = [
    "/", "/?tasks=public", "/?integrity=strict", "/?sort=every-none", "/?view=table",
    "/tasks", "/failures", "/changes", "/about", "/keys", "/submit", "/compare", "/parity",
    "/guide", "/no-such-page", "/keys/request", "/keys/request?id=1", "/keys/request?id=x", "/desk",
    "/changes.atom", "/api/v1/key-requests/1",
    "/api/v1/leaderboard", "/api/v1/leaderboard?tasks=public", "/api/v1/leaderboard?integrity=strict",
    "/api/v1/leaderboard?tier=nobody", "/api/v1/tasks", "/api/v1/changes", "/api/v1/changes?limit=0",
    "/api/v1/keys", "/api/v1/openapi.json", "/api/v1/no-such", "/api/v1", "/api/v1/", "/api/v1/tasks/cogs/x", "/api/v1/runs/0", "/api/v1/agents/nobody",
    "/leaderboard.csv", "/leaderboard.csv?tasks=public", "/leaderboard.csv?integrity=strict",
]
LINK = re.compile(r'(?:href|src|action)="(/[^"#]*)"')
# How many answers at most (REXBENCH_CRAWL_LIMIT): a synthetic board of hundreds of
# agents has hundreds of thousands of runs and artifacts; the crawl is breadth first, so a
# limit keeps every kind of answer and drops only the deepest of each.
LIMIT = int(os.environ.get("REXBENCH_CRAWL_LIMIT", "40000"))


# The pages that take a value no link of the demo names, each with one to ask for.
UNLINKED = {"/login/{ticket}": "/login/no-such-ticket"}


def pattern(route: str) -> "re.Pattern":
    """The paths a router's page path (`/tasks/{id}`) answers."""
    return re.compile("".join("[^/]+" if re.fullmatch(r"\{\w+\}|:\w+", part) else re.escape(part)
                              for part in re.split(r"(\{\w+\}|:\w+)", route)))


def main(base: str, out: Path, pages=None) -> int:
    out.mkdir(parents=True, exist_ok=True)
    routes = [line.strip() for line in pages.read_text().splitlines() if line.strip()] if pages else []
    queue = list(START)
    for route in routes:
        start = UNLINKED.get(route, route)
        if start not in queue and not re.search(r"\{\w+\}|:\w+", start):
            queue.append(start)
    seen = set(queue)
    fetched = set()

    def add(path: str) -> None:
        path = path.replace("&amp;", "&")
        if path.startswith("/pkg/") or path.startswith("/sfn/") or path in seen or len(seen) >= LIMIT:
            return
        seen.add(path)
        queue.append(path)

    while queue:
        path = queue.pop(0)
        fetched.add(urllib.parse.urlsplit(path).path)
        status, headers, body = fetch(base + path)
        name = urllib.parse.quote(path, safe="")[:200]
        if len(urllib.parse.quote(path, safe="")) > 200:
            name += "-" + str(abs(hash(path)))
        text = re.sub(rb"/pkg/[0-9a-f]{16,}/", b"/pkg/DIGEST/", body)
        head = f"{path}\n{status}\n" + "".join(f"{h}: {headers.get(h, '')}\n" for h in HEADERS) + "\n"
        (out / name).write_bytes(head.encode() + text)
        media = headers.get("content-type", "")
        if media.startswith("text/html"):
            for link in LINK.findall(body.decode("utf-8", "replace")):
                add(link)
                for api in api_twins(link):
                    add(api)
        elif media.startswith("application/json") and path.startswith("/api/v1/"):
            for api in json_links(body):
                add(api)
    unreached = [r for r in routes if not any(pattern(r).fullmatch(p) for p in fetched)]
    for route in unreached:
        print(f"scripts/crawl_answers.py: the router's page {route} was never reached: link it from a "
              f"page, or give it an address in UNLINKED", file=sys.stderr)
    return 1 if unreached else 0


def api_twins(link: str) -> list:
    """The JSON answers behind a page's link."""
    parts = urllib.parse.urlsplit(link)
    if parts.path == "/parity" and parts.query:
        return [f"/api/v1/parity?{parts.query}"]
    if parts.path == "/failures":
        return ["/api/v1/failures"]
    if parts.path == "/compare" and parts.query:
        query = urllib.parse.parse_qs(parts.query)
        if query.get("a") and query.get("b"):
            return [f"/api/v1/compare?{parts.query}"]
    m = re.fullmatch(r"/(agents|tasks|runs)/([^/]+)", parts.path)
    return [f"/api/v1/{m.group(1)}/{m.group(2)}"] if m else []


def json_links(body: bytes) -> list:
    """Links and ids named in an API answer: envelopes, artifacts, runs, agents."""
    try:
        doc = json.loads(body)
    except ValueError:
        return []
    found = []

    def walk(value, key=""):
        if isinstance(value, dict):
            for k, v in value.items():
                walk(v, k)
        elif isinstance(value, list):
            for v in value:
                walk(v, key)
        elif isinstance(value, str):
            if value.startswith("/") and not value.startswith("//"):
                found.append(value)
            if key == "bundle_id" and re.fullmatch(r"[0-9a-f]{64}", value):
                found.append(f"/api/v1/submissions/{value}/envelope")
            if key == "digest" and re.fullmatch(r"[0-9a-f]{64}", value):
                found.append(f"/artifacts/{value}")
            if key == "agent_id":
                found.append(f"/api/v1/agents/{value}")
    walk(doc)
    return found


def fetch(url: str):
    request = urllib.request.Request(url, headers={"Accept-Encoding": "identity"})
    try:
        with urllib.request.urlopen(request, timeout=60) as r:
            return r.status, {k.lower(): v for k, v in r.headers.items()}, r.read()
    except urllib.error.HTTPError as e:
        return e.code, {k.lower(): v for k, v in e.headers.items()}, e.read()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], Path(sys.argv[2]), Path(sys.argv[3]) if len(sys.argv) > 3 else None))
