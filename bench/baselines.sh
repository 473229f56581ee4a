#!/usr/bin/env bash
# Measures ingest throughput against baselines measured in the same run:
# reading and splitting lines, reading + validating every line as JSON, and
# the same ingest with redaction off (every field kept).
# Usage: bench/baselines.sh [count]   (prints go test -bench output, then the ratios)
# (This was bench/run.sh before issue 11; run.sh now measures ingest
# against DuckDB, see bench/README.md.)
set -euo pipefail
cd "$(dirname "$0")/.."
count=${1:-3}
out=$(go test -run '^$' -bench 'BenchmarkReadLines|BenchmarkValidateLines|BenchmarkIngest$|BenchmarkIngestNoRedaction' -benchmem -count "$count" ./pipeline/)
echo "$out"
echo "$out" | awk '
  /^Benchmark/ { name=$1; sub(/-[0-9]+$/, "", name); for (i=1;i<=NF;i++) if ($(i+1)=="MB/s") { s[name]+=$i; n[name]++ } }
  END {
    r=s["BenchmarkReadLines"]/n["BenchmarkReadLines"]; v=s["BenchmarkValidateLines"]/n["BenchmarkValidateLines"]; g=s["BenchmarkIngest"]/n["BenchmarkIngest"];
    printf "\nmean MB/s: read lines %.0f, validate lines %.0f, ingest %.0f\n", r, v, g;
    nr=s["BenchmarkIngestNoRedaction"]/n["BenchmarkIngestNoRedaction"];
    printf "ingest / read lines = %.3f, ingest / validate lines = %.3f\n", g/r, g/v;
    printf "ingest with redaction / without = %.3f (no-redaction run: %.0f MB/s)\n", g/nr, nr }'
