#!/bin/sh
# The csvstats task's own evaluator, kept private beside its gold results as the
# maintainers keep the ten private RExBench tasks' evaluators. It runs in the patched
# codebase after the experiment; its exit status decides, and a JSON object on its
# stdout gives metrics. Here: the summary must have exactly one data row.
rows=$(($(wc -l < results/summary.csv) - 1))
echo "{\"summary_rows\": $rows}"
[ "$rows" -eq 1 ]
