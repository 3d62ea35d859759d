"""Fails if the modules of a workspace crate depend on each other in a cycle.

The rule, at every level of every crate: the modules that are siblings (the children of
one module, the crate root's included) depend on each other without a cycle, where
module A depends on sibling B when code in A or below it names B or anything below it
(`crate::b::…`, `super::b::…` from A's children, `b::…` or `self::b::…` from the
parent's file is the parent's own use, not A's). A child naming its parent (`super::`)
is not counted: the parent holds what its children share.

Run by scripts/test: `python3 scripts/module_cycles.py` from the repository's root.
Exit 1 with each cycle named, as `crate: a -> b -> a (a/x.rs:12 names b)`.
"""

import re
import sys
from pathlib import Path

CRATES = ["vocab", "bundle", "benchmark", "stats", "store", "views", "app", "server", "runner", "web", "web-verify"]
MOD_DECL = re.compile(r"^\s*(?:pub(?:\([^)]*\))?\s+)?mod\s+([a-z_][a-z0-9_]*)\s*;", re.M)
PATH = re.compile(r"\b(crate|super|self)((?:::[A-Za-z_][A-Za-z0-9_]*)+)")
USE_GROUP = re.compile(r"\buse\s+(crate|super|self)::\{([^;]*)\};", re.S)


def modules(src: Path):
    """Each module of a crate as its path (a tuple of names) → its file."""
    root = src / "lib.rs" if (src / "lib.rs").exists() else src / "main.rs"
    found = {(): root}
    todo = [((), root)]
    while todo:
        path, file = todo.pop()
        text = strip_comments(file.read_text())
        base = file.parent if file.name in ("lib.rs", "main.rs", "mod.rs") else file.parent / file.stem
        for name in MOD_DECL.findall(text):
            child = base / f"{name}.rs"
            if not child.exists():
                child = base / name / "mod.rs"
            if child.exists():
                found[path + (name,)] = child
                todo.append((path + (name,), child))
    return found


def strip_comments(text: str) -> str:
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    return re.sub(r"//[^\n]*", "", text)


def references(path, text, known):
    """The modules a file's code names, as full paths, with the line of each."""
    out = []
    groups = []
    for m in USE_GROUP.finditer(text):
        for item in re.split(r",", m.group(2)):
            item = item.strip().split(" as ")[0].strip()
            first = re.match(r"[A-Za-z_][A-Za-z0-9_]*(?:::[A-Za-z_][A-Za-z0-9_]*)*", item)
            if first:
                groups.append((m.group(1), "::" + first.group(0), text[: m.start()].count("\n") + 1))
    singles = [(m.group(1), m.group(2), text[: m.start()].count("\n") + 1) for m in PATH.finditer(text)]
    for anchor, rest, line in singles + groups:
        names = rest.strip(":").split("::")
        if anchor == "crate":
            base = ()
        elif anchor == "super":
            base = path[:-1]
            while names and names[0] == "super":
                base, names = base[:-1], names[1:]
        else:
            base = path
        full = base + tuple(names)
        # The deepest module the path names.
        while full and full not in known:
            full = full[:-1]
        out.append((full, line))
    return out


def cycles_of(crate: str, src: Path):
    known = modules(src)
    problems = []
    # Edges between siblings: for each reference from module X to module Y, the two
    # children of their deepest common ancestor that hold X and Y.
    edges = {}
    for path, file in known.items():
        text = strip_comments(file.read_text())
        for target, line in references(path, text, known):
            common = 0
            while common < min(len(path), len(target)) and path[common] == target[common]:
                common += 1
            if common >= len(path) or common >= len(target):
                continue  # a module naming its own ancestor or descendant
            parent = path[:common]
            a, b = path[common], target[common]
            where = f"{file.relative_to(src.parent)}:{line} names {'::'.join(target)}"
            edges.setdefault(parent, {}).setdefault(a, {}).setdefault(b, where)
    for parent, graph in edges.items():
        for cycle in find_cycles(graph):
            steps = " -> ".join(cycle + [cycle[0]])
            whys = "; ".join(graph[cycle[i]][cycle[(i + 1) % len(cycle)]] for i in range(len(cycle)))
            scope = "::".join(parent) or "the crate root"
            problems.append(f"{crate} ({scope}): {steps} ({whys})")
    return problems


def find_cycles(graph):
    """One cycle per strongly connected component of more than one module."""
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph.get(v, {}):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                out.append(path_through(graph, sorted(component)))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def path_through(graph, component):
    """A cycle within a strongly connected component, from its first module."""
    start = component[0]
    members = set(component)
    seen = {start: None}
    queue = [start]
    while queue:
        v = queue.pop(0)
        for w in sorted(graph.get(v, {})):
            if w == start:
                cycle = [v]
                while seen[cycle[-1]] is not None:
                    cycle.append(seen[cycle[-1]])
                return list(reversed(cycle))
            if w in members and w not in seen:
                seen[w] = v
                queue.append(w)
    return component


def main():
    root = Path(__file__).resolve().parent.parent
    problems = []
    for crate in CRATES:
        problems += cycles_of(crate, root / crate / "src")
    if problems:
        print("scripts/module_cycles.py: modules that depend on each other in a cycle:", file=sys.stderr)
        for p in problems:
            print(f"  {p}", file=sys.stderr)
        sys.exit(1)
    print(f"scripts/module_cycles.py: no module cycle in {len(CRATES)} crates")


if __name__ == "__main__":
    main()
