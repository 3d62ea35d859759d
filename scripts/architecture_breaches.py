#!/usr/bin/env python3
"""Shows that scripts/architecture.py can fail: in a copy of the repository (the files git
tracks or would track), it plants one breach of each invariant the script checks and
runs the script there, which must exit 1 naming the breach; the copy as it is must pass.

Run by scripts/test; exits 1 naming each breach the script let through.
"""

import pathlib
import shutil
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parent.parent

# (what, file, text appended to it, what the script must say)
BREACHES = [
    ("an API answer that is a store type",
     "server/src/api/parity.rs",
     "\n#[allow(dead_code)]\nfn planted() -> axum::Json<store::LeaderboardRow> { unimplemented!() }\n",
     "server/src/api/parity.rs:"),
    ("an API answer that is a store type imported by name",
     "server/src/api/runs.rs",
     "\nuse store::RunDetail;\n#[allow(dead_code)]\nfn planted() -> Json<RunDetail> { unimplemented!() }\n",
     "answers with the store's RunDetail"),
    ("a list cut by hand in a view",
     "views/src/task.rs",
     "\npub fn planted(v: &[u8]) -> Vec<u8> { v.iter().skip(20).take(20).copied().collect() }\n",
     "views/src/task.rs:"),
    ("a page counting pages itself",
     "app/src/pages/task.rs",
     "\npub fn planted(n: usize) -> usize { n.div_ceil(50) }\n",
     "app/src/pages/task.rs:"),
    ("a page ranking what it shows",
     "app/src/pages/failures.rs",
     "\npub fn planted(v: &mut [i64]) { v.sort_by(|a, b| b.cmp(a)); }\n",
     "sorts or sums in a page"),
    ("a page summing what it shows",
     "app/src/pages/agent.rs",
     "\npub fn planted(v: &[i64]) -> i64 { v.iter().sum::<i64>() }\n",
     "sorts or sums in a page"),
    ("a Harbor job's file read straight from the filesystem",
     "runner/src/harbor/trial.rs",
     "\n#[allow(dead_code)]\nfn planted(p: &Path) -> Vec<u8> { std::fs::read(p).unwrap() }\n",
     "reads a handed-over folder straight from the filesystem"),
]


def copy(to):
    names = subprocess.run(["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                           cwd=ROOT, capture_output=True, check=True).stdout.split(b"\0")
    for name in filter(None, names):
        rel = name.decode()
        src = ROOT / rel
        if src.is_file() and not src.is_symlink():
            dst = to / rel
            dst.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dst)


def run(repo):
    return subprocess.run([sys.executable, str(repo / "scripts/architecture.py")],
                          cwd=repo, capture_output=True, text=True)


def main():
    problems = []
    with tempfile.TemporaryDirectory() as tmp:
        repo = pathlib.Path(tmp) / "repo"
        copy(repo)
        clean = run(repo)
        if clean.returncode != 0:
            problems.append(f"the unchanged copy fails the script:\n{clean.stderr}")
        for what, path, planted, said in BREACHES:
            target = repo / path
            before = target.read_text()
            target.write_text(before + planted)
            try:
                out = run(repo)
            finally:
                target.write_text(before)
            if out.returncode != 1 or said not in out.stderr:
                problems.append(f"{what} planted in {path} was not caught (exit {out.returncode}; "
                                f"expected a line with {said!r}):\n{out.stderr}")
    for p in problems:
        print(f"scripts/architecture_breaches.py: {p}", file=sys.stderr)
    if problems:
        return 1
    print(f"scripts/architecture_breaches.py: each of {len(BREACHES)} planted breaches fails the map's check")
    return 0


if __name__ == "__main__":
    sys.exit(main())
