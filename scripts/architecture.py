#!/usr/bin/env python3
"""Holds ARCHITECTURE.md to the code, so that the map a newcomer reads stays true:

- the number of crates it says in words is the workspace's;
- its list of crate edges is what `cargo metadata` gives (normal dependencies between
  the workspace's crates), no more and no fewer;
- every source file of more than 500 lines (outside `tests/`) is named, with why it is
  one piece, under "Files of more than 500 lines", and every file named there is one;
- every path it names exists, and every module is on the map (the rules below);
- every file the recipe "Adding a page and an API resource" names exists;
- the invariants it can check hold in the code (see `invariants`): an API answer is a
  views type, never a store type; every list is cut by `views::query::Window` (no hand
  cut in views or pages); no page sorts or sums what it shows (a rule on what a view
  counts or ranks is the view's). `scripts/architecture_breaches.py` plants a breach of
  each in a copy of the repository and sees this script fail on it.

Paths. A name is a path when it is written in backticks and either starts with a folder
the repository holds at its root (one git tracks: `target/` is a build's) and has a `/`
in it (`server/tests/it/api.rs`, `docs/method.md`, `store/src/memo.rs`: a path from the
root) or ends in `.rs` or `/` (`memo.rs`, `reads/`;
a URL such as `/submit` is not one). A path from the root must exist wherever the
document names it; one with a placeholder (`server/src/api/<resource>.rs`) must have its
folder up to the placeholder. In a crate's section of the code map (a `### ` heading
naming the crate's folder in backticks) a path may also be relative: to the crate's
`src/` (`reads/`, `memo.rs`, `api/extract.rs`), to a folder the same section names
(`audit/` … `mod.rs` is `audit/mod.rs`), to the crate's folder (`tests/it/fuzz.rs`), or to
the repository's root for a folder that is not a crate's (`deploy/`). A relative name
none of these makes exist is stale (`cli.rs` where the module is now `cli/mod.rs`). A
crate's folder itself (`runner/`) names the crate, not a module. The recipe writes every
path from the root (a relative one is refused there), so each of its files is checked.

Modules. Every `*.rs` file under a crate's `src/` is a module that must be on the map,
except:
- `src/lib.rs` and `src/main.rs`: they stand for the crate, which its section describes
  (a `mod.rs` stands for its folder: it is on the map when its folder is);
- test-only files: `tests.rs`, and anything under a `tests/` folder (`cost/tests.rs`).
A module is on the map when a crate's section names it (its path, relative or from the
root) or names a folder it is in (`reads/` covers `reads/parity.rs` and everything below
it). So a folder of one kind of thing (the API's resources, the pages) is one entry whose
sentence says what its files are, and a module that is a piece of its own is named. Only
the crates' sections count: a module named only in the invariants or the recipe is not
on the map.

Run by scripts/test; exits 1 naming each difference in a sentence.
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
RECIPE = "## Adding a page and an API resource"
STANDS_FOR_CRATE = {"lib.rs", "main.rs"}
TICKED = re.compile(r"`([^`\s]+)`")
PLACEHOLDER = re.compile(r"[<{*]")


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


def top_section(text, heading):
    """A `## ` section with its `### ` subsections."""
    start = text.index(heading)
    rest = text[start + len(heading):]
    end = re.search(r"^## ", rest, re.M)
    return rest[: end.start()] if end else rest


def crate_sections(doc, crates):
    """Each `### ` section of the code map that names crates' folders: (crates, its text)."""
    found = []
    parts = re.split(r"^(### .*)$", top_section(doc, "## Code map"), flags=re.M)
    for heading, body in zip(parts[1::2], parts[2::2]):
        named = [c for c in re.findall(r"`([\w-]+)/`", heading) if c in crates]
        if named:
            found.append((named, body))
    return found


def rel(path):
    return path.relative_to(ROOT).as_posix()


def is_path(name):
    """A module's file or a folder (a URL such as `/submit` is not one)."""
    return name.endswith((".rs", "/")) and not name.startswith("/")


def roots():
    """The root's folders and files the repository holds (those git tracks). What a build
    or a run makes there (`target/`, `data/`, `.venv/`: ignored by git) is not the
    repository's, and exists or not depending on what ran before this script (a fresh
    clone has no `target/site/pkg` until `scripts/wasm` runs). Outside a git checkout,
    whatever is on disk."""
    try:
        out = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True)
    except (OSError, subprocess.CalledProcessError):
        return {p.name for p in ROOT.iterdir() if not p.name.startswith(".")}
    return {name.split("/", 1)[0] for name in out.stdout.decode().split("\0") if name}


def from_root(name, top):
    return not name.startswith(("/", "./", "../")) and name.split("/", 1)[0] in top and "/" in name


def check_rooted(name):
    """None if a path from the root exists (or, with a placeholder, its folder does); else a reason."""
    if PLACEHOLDER.search(name):
        folder = name[: PLACEHOLDER.search(name).start()].rsplit("/", 1)[0]
        return None if (ROOT / folder).is_dir() else f"its folder {folder}/ does not exist"
    target = ROOT / name.rstrip("/")
    if name.endswith("/"):
        return None if target.is_dir() else "that folder does not exist"
    return None if target.exists() else "that file does not exist"


def modules(crate_dir):
    """The modules that must be on the map: src/**/*.rs but the crate's root and tests."""
    src = crate_dir / "src"
    for path in sorted(src.rglob("*.rs")):
        parts = path.relative_to(src).parts
        if (path.name in STANDS_FOR_CRATE and len(parts) == 1) or path.name == "tests.rs" \
                or "tests" in parts[:-1]:
            continue
        yield path


def source(folder):
    """The non-test Rust files under `folder` (a path from the root), with their lines
    up to a `#[cfg(test)]` (a module's tests are not its rules)."""
    base = ROOT / folder
    for path in [base] if base.is_file() else sorted(base.rglob("*.rs")):
        if "tests" in path.relative_to(ROOT).parts or path.name == "tests.rs":
            continue
        text = path.read_text(encoding="utf-8")
        yield rel(path), text.split("#[cfg(test)]", 1)[0]


STORE_NAMES = re.compile(r"use store::(?:\{([^}]*)\}|(\w+));")
ANSWERED = re.compile(r"(?:body\s*=\s*|Json<)(?:Vec<)?((?:store::)?[\w:]+)")
HAND_CUT = re.compile(r"\.skip\(|\.div_ceil\(")
# A read of a file's bytes or a folder's listing straight from the filesystem.
DIRECT_READ = re.compile(r"\bfs::(?:read|read_to_string|read_dir|read_link)\(|\bFile::open\(|\.read_dir\(")
# The modules that read a folder someone else filled (an agent's outputs, a Harbor job,
# a task folder, a results folder): each reads it through `benchmark::confined`.
FOLDER_READERS = ("runner/src/harbor", "runner/src/audit", "runner/src/outputs.rs",
                  "benchmark/src/pack.rs", "benchmark/src/results.rs", "benchmark/src/check")
PAGE_RULE = re.compile(r"\.sort\(\)|\.sort_(?:by|by_key|by_cached_key|unstable\w*)\(|\.sum(?:::<[^>]*>)?\(\)")


def invariants():
    """The invariants ARCHITECTURE.md states that a scan of the code can hold."""
    problems = []
    # An API answer is a views type: no `body = store::…` nor `Json<store::…>` in a
    # handler, and no store type imported and answered by its bare name.
    for name, text in source("server/src/api"):
        imported = set()
        for group, single in STORE_NAMES.findall(text):
            imported |= {n.strip().split(" as ")[-1] for n in (group or single).split(",") if n.strip()}
        for line_no, line in enumerate(text.splitlines(), 1):
            for ty in ANSWERED.findall(line):
                if ty.startswith("store::") or ty in imported:
                    problems.append(f"{name}:{line_no} answers with the store's {ty}: an API answer is "
                                    f"a views type (the view that builds it owns it)")
    # Every list is cut by the one window (`views/src/query.rs`), API and page alike.
    for folder in ("views/src", "app/src/pages"):
        for name, text in source(folder):
            if name == "views/src/query.rs":
                continue
            for line_no, line in enumerate(text.splitlines(), 1):
                if HAND_CUT.search(line):
                    problems.append(f"{name}:{line_no} cuts a list by hand: cut it with "
                                    f"views::query::Window::of (one rule past the end)")
    # No rule in a page: what a view counts or ranks is decided in views.
    for name, text in source("app/src/pages"):
        for line_no, line in enumerate(text.splitlines(), 1):
            if PAGE_RULE.search(line):
                problems.append(f"{name}:{line_no} sorts or sums in a page: a rule on what a view "
                                f"counts or ranks belongs to its views module")
    # Every handed-over folder is read through `benchmark::confined` (no link followed
    # out, no blocking open, no unbounded read).
    for folder in FOLDER_READERS:
        for name, text in source(folder):
            for line_no, line in enumerate(text.splitlines(), 1):
                if DIRECT_READ.search(line):
                    problems.append(f"{name}:{line_no} reads a handed-over folder straight from the "
                                    f"filesystem: read it through benchmark::confined::Folder")
    return problems


def main():
    doc = (ROOT / "ARCHITECTURE.md").read_text()
    dirs, edges = metadata()
    top = roots()
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
                long.add(rel(path))
    for path in sorted(long - named):
        problems.append(f"{path} has more than {LONG} lines and ARCHITECTURE.md does not say why it is one piece")
    for path in sorted(named - long):
        problems.append(f"ARCHITECTURE.md names {path} among the long files; it is not one (or not there)")

    # Paths from the root, anywhere in the document.
    rooted = sorted({n for n in TICKED.findall(doc) if from_root(n, top)})
    recipe_names = set(TICKED.findall(top_section(doc, RECIPE))) if RECIPE in doc else set()
    for name in rooted:
        reason = check_rooted(name)
        if reason:
            where = "the recipe" if name in recipe_names else "ARCHITECTURE.md"
            problems.append(f"{where} names {name}, but {reason} (moved, renamed or removed?)")

    # The crates' sections: relative paths resolve, and together they cover every module.
    on_map = set()   # files and folders (as paths from the root, folders ending in /) named
    for crates, body in crate_sections(doc, dirs):
        names = [n for n in TICKED.findall(body) if is_path(n) and not PLACEHOLDER.search(n)]
        bases = [dirs[c] / "src" for c in crates]
        folders = [b / n for b in bases for n in names if n.endswith("/") and (b / n).is_dir()]
        for name in dict.fromkeys(names):
            if from_root(name, top):
                on_map.add(name)
                continue
            if name.rstrip("/") in crates or name.rstrip("/") in dirs:
                continue  # a crate's folder names the crate
            candidates = [b / name for b in bases] + [f / name for f in folders] \
                + [dirs[c] / name for c in crates]
            if name.split("/", 1)[0] in top and name.split("/", 1)[0] not in dirs:
                candidates.append(ROOT / name)
            found = [c for c in candidates
                     if (c.is_dir() if name.endswith("/") else c.is_file())]
            if not found:
                problems.append(f"the section of {', '.join(crates)} names {name}, which is "
                                f"neither in {', '.join(rel(b) + '/' for b in bases)} nor in a folder "
                                f"the section names (moved, renamed or removed?)")
            for f in found:
                on_map.add(rel(f) + ("/" if name.endswith("/") else ""))

    checked = 0
    for crate, crate_dir in sorted(dirs.items()):
        for path in modules(crate_dir):
            checked += 1
            name = rel(path)
            ancestors = [rel(p) + "/" for p in path.parents if p != ROOT and p.is_relative_to(crate_dir / "src")
                         and p != crate_dir / "src"]
            if name not in on_map and not any(a in on_map for a in ancestors):
                problems.append(f"{name} is on no map: name it (or a folder it is in) in the section "
                                f"of {crate} in ARCHITECTURE.md, saying what it holds")

    if RECIPE in doc:
        recipe = sorted({n for n in TICKED.findall(top_section(doc, RECIPE))
                         if is_path(n) or ("/" in n and not n.startswith("/"))})
        for name in recipe:
            if not from_root(name, top):
                problems.append(f"the recipe names {name}, which is not a path from the repository's "
                                f"root (write it whole, so that it can be checked)")
    else:
        recipe = []
        problems.append(f"ARCHITECTURE.md has no section \"{RECIPE[3:]}\"")

    held = invariants()
    problems += held

    for p in problems:
        print(f"scripts/architecture.py: {p}", file=sys.stderr)
    if problems:
        return 1
    print(f"scripts/architecture.py: the map holds ({len(dirs)} crates, {len(edges)} edges, "
          f"{len(long)} long files, {checked} modules, {len(rooted)} paths, {len(recipe)} in the recipe)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
