#!/bin/sh
# External checker for csvstats: the summary must have exactly one data row.
# Exit status decides; the JSON on stdout gives metrics.
rows=$(($(wc -l < results/summary.csv) - 1))
echo "{\"summary_rows\": $rows}"
[ "$rows" -eq 1 ]
