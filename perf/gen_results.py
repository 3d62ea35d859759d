"""Writes a results directory (runner/README.md layout) whose artifacts add up to about
TARGET_MB megabytes of realistic text: agent logs, experiment output, patches.
Deterministic: the same arguments give the same bytes."""

import json
import os
import random
import sys

out, target_mb = sys.argv[1], int(sys.argv[2])
# With a run count, exactly that many runs share the target size; without, runs of about
# 3.2 MB each until the target is reached.
runs_wanted = int(sys.argv[3]) if len(sys.argv) > 3 else None
rng = random.Random(int(os.environ.get("SEED", "20261120")))
tasks = ["checkeval", "cogs", "entity-tracking-multimodal", "explain-then-translate", "implicit-ins",
         "mission-impossible", "othello", "re-reading", "reasoning-or-reciting", "tree-of-thoughts",
         "varierr-nli", "winodict"]
words = ("loss step epoch lr grad norm eval acc token batch model layer head attention "
         "optimizer warmup checkpoint saving loading dataset split train test valid").split()


def log_text(size):
    lines, n = [], 0
    step = 0
    while n < size:
        step += 1
        kind = rng.random()
        if kind < 0.7:
            line = (f"[2026-11-20 12:{step // 60 % 60:02d}:{step % 60:02d}] step {step} "
                    f"loss={rng.uniform(0.1, 3):.5f} lr={rng.uniform(1e-5, 1e-3):.2e} "
                    f"grad_norm={rng.uniform(0, 5):.4f}")
        elif kind < 0.95:
            line = " ".join(rng.choice(words) for _ in range(rng.randint(5, 16)))
        else:
            line = f'  File "src/train.py", line {rng.randint(1, 900)}, in {rng.choice(words)}'
        lines.append(line)
        n += len(line) + 1
    return "\n".join(lines) + "\n"


def patch_text(size):
    body, n = [], 0
    while n < size:
        line = f"+    {rng.choice(words)}_{rng.randint(0, 99)} = {rng.choice(words)}({rng.random():.4f})"
        body.append(line)
        n += len(line) + 1
    return f"--- a/src/model.py\n+++ b/src/model.py\n@@ -1,3 +1,{len(body)} @@\n" + "\n".join(body) + "\n"


os.makedirs(out, exist_ok=True)
with open(os.path.join(out, "evaluation.json"), "w") as f:
    json.dump({"benchmark": {"name": "RExBench", "version": "1.0", "task_set_digest": "ab" * 32}}, f)

total, target = 0, target_mb * 1_000_000
hints = ["none", "hints", "detailed"]
scale = target / runs_wanted / 3_240_000 if runs_wanted else 1.0
i = 0
while (i < runs_wanted) if runs_wanted else (total < target):
    task, hint, attempt = tasks[i % 12], hints[i // 12 % 3], i // 36 + 1
    d = os.path.join(out, "runs", task, hint, str(attempt))
    os.makedirs(d, exist_ok=True)
    files = {"patch.diff": patch_text(int(40_000 * scale)), "agent_log.txt": log_text(int(2_000_000 * scale)),
             "stdout.txt": log_text(int(900_000 * scale)), "stderr.txt": log_text(int(300_000 * scale))}
    for name, text in files.items():
        with open(os.path.join(d, name), "w") as f:
            f.write(text)
        total += len(text)
    with open(os.path.join(d, "run.json"), "w") as f:
        json.dump({"outcome": "wrong_result", "duration_s": 100.0 + i, "metrics": {"acc": rng.random()}}, f)
    i += 1
print(f"{i} runs, {total / 1e6:.1f} MB of artifacts")
