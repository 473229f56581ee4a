#!/usr/bin/env bash
# Shows that the correlator's state stays flat as the input grows: peak live
# heap for 200,000 and 2,000,000 exchanges, and their ratio (1.0 is flat;
# 10.0 would mean memory grows with the input).
set -euo pipefail
cd "$(dirname "$0")/.."
out=$(go test -run '^$' -bench 'BenchmarkCorrelatorState' -benchtime 1x ./correlate/)
echo "$out"
echo "$out" | awk '/exchanges=200000/ { for (i=1;i<=NF;i++) if ($(i+1)=="peak-heap-MB") a=$i }
                   /exchanges=2000000/ { for (i=1;i<=NF;i++) if ($(i+1)=="peak-heap-MB") b=$i }
                   END { printf "\npeak heap: %.1f MB for 200k exchanges, %.1f MB for 2M: ratio %.2f for 10x the input\n", a, b, b/a }'
