#!/usr/bin/env python3
"""pass@k and pass^k of the paper's agents, computed here from the paper's per-task
means (the maintainers' transcription, docs/data/rexbench-v3-results.json) by the
formulas, with Python's exact binomial coefficients: a check of the leaderboard's
numbers that shares no code with it.

Each per-task cell is a mean over n = 5 runs, so c = round(5 * mean) runs succeeded;
pass@k = 1 - C(n-c, k) / C(n, k) and pass^k = C(c, k) / C(n, k), averaged over the
tasks, for k = 1..5.

    pass_k.py LEADERBOARD_JSON PAPER_JSON  ->  {"checked": N, "mismatches": [...]}
"""
import json
import math
import sys

N = 5

board = json.load(open(sys.argv[1]))
paper = json.load(open(sys.argv[2]))
rows = {r["agent_id"]: r for r in board["rows"]}
mismatches = []
checked = 0
for agent in paper["agents"]:
    row = rows.get(agent["id"])
    if row is None:
        mismatches.append(f"{agent['id']}: not on the leaderboard")
        continue
    for hint, tasks in agent["results"].items():
        successes = [math.floor(cell["final_success"] * N + 0.5) for cell in tasks.values()]
        shown = row["stats"]["reliability"][hint]
        for k in range(1, N + 1):
            expected = {
                "pass_at": sum(1 - math.comb(N - c, k) / math.comb(N, k) for c in successes) / len(successes),
                "pass_all": sum(math.comb(c, k) / math.comb(N, k) for c in successes) / len(successes),
            }
            for measure, want in expected.items():
                checked += 1
                got = shown[measure][k - 1]["estimate"]
                if abs(got - want) > 1e-9:
                    mismatches.append(f"{agent['id']} {hint} {measure} k={k}: {got} shown, {want} computed")
                low, high = shown[measure][k - 1]["low"], shown[measure][k - 1]["high"]
                if not (0 <= low <= high <= 1):
                    mismatches.append(f"{agent['id']} {hint} {measure} k={k}: interval [{low}, {high}]")
print(json.dumps({"checked": checked, "mismatches": mismatches}))
