#!/usr/bin/env python3
"""Holds ARCHITECTURE.md to the code, so that the map a newcomer reads stays true:

- the number of crates it says in words is the workspace's;
- its list of crate edges is what `cargo metadata` gives (normal dependencies between
  the workspace's crates), no more and no fewer;
- every source file of more than 500 lines (outside `tests/`) is named, with why it is
  one piece, under "Files of more than 500 lines", and every file named there is one.

Run by scripts/test; exits 1 naming each difference.
"""

import json
import pathlib
import re
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
WORDS = {n: w for n, w in enumerate(
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen".split())}
LONG = 500


def metadata():
    out = subprocess.run(
        ["cargo", "metadata", "--no-deps", "--format-version", "1", "--offline"],
        cwd=ROOT, capture_output=True, text=True, check=True).stdout
    packages = json.loads(out)["packages"]
    names = {p["name"] for p in packages}
    short = lambda n: n.removeprefix("rexbench-")
    edges = {(short(p["name"]), short(d["name"]))
             for p in packages for d in p["dependencies"]
             if d["name"] in names and d.get("kind") is None}
    dirs = {short(p["name"]): pathlib.Path(p["manifest_path"]).parent for p in packages}
    return dirs, edges


def section(text, heading):
    start = text.index(heading)
    rest = text[start + len(heading):]
    end = re.search(r"^#{2,3} ", rest, re.M)
    return rest[: end.start()] if end else rest


def main():
    doc = (ROOT / "ARCHITECTURE.md").read_text()
    dirs, edges = metadata()
    problems = []

    said = re.search(r"there are (\w+), each a folder", doc)
    if not said or said.group(1) != WORDS.get(len(dirs)):
        problems.append(f"ARCHITECTURE.md says {said.group(1) if said else 'no number of'} crates; "
                        f"the workspace has {WORDS.get(len(dirs), len(dirs))}")

    listed = set()
    block = section(doc, "Every edge, as `cargo metadata` gives it")
    for line in re.findall(r"^(\S+) → (.+)$", block, re.M):
        for target in line[1].split(","):
            listed.add((line[0].strip(), target.strip()))
    for a, b in sorted(edges - listed):
        problems.append(f"crate edge {a} → {b} is in Cargo.toml, not in ARCHITECTURE.md")
    for a, b in sorted(listed - edges):
        problems.append(f"crate edge {a} → {b} is in ARCHITECTURE.md, not in Cargo.toml")

    named = set(re.findall(r"`([\w/.-]+\.rs)`", section(doc, "### Files of more than 500 lines")))
    long = set()
    for crate_dir in dirs.values():
        for path in (crate_dir / "src").rglob("*.rs"):
            if sum(1 for _ in path.open(encoding="utf-8")) > LONG:
                long.add(str(path.relative_to(ROOT)))
    for path in sorted(long - named):
        problems.append(f"{path} has more than {LONG} lines and ARCHITECTURE.md does not say why it is one piece")
    for path in sorted(named - long):
        problems.append(f"ARCHITECTURE.md names {path} among the long files; it is not one (or not there)")

    for p in problems:
        print(f"scripts/architecture.py: {p}", file=sys.stderr)
    if problems:
        return 1
    print(f"scripts/architecture.py: the map holds ({len(dirs)} crates, {len(edges)} edges, {len(long)} long files)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
