#!/bin/sh
# Summarises data.csv: how many scores, and their mean.
# The extension asked of the agent: leave rows without a score out of both.
set -e
sleep 0.2  # stands in for the experiment's real work
mkdir -p results
awk -F, 'NR > 1 { n += 1; sum += $2 } END {
  printf "{\"count\": %d, \"mean\": %.4f}\n", n, sum / n > "results/metrics.json"
  printf "count,mean\n%d,%.4f\n", n, sum / n > "results/summary.csv"
}' data.csv
echo "wrote results/metrics.json and results/summary.csv"
