#!/usr/bin/env bash
# Shows that the correlator's state stays flat as the input grows: peak live
# heap for 200,000 and 2,000,000 exchanges in three shapes, and the ratio for
# each (1.0 is flat; 10.0 would mean memory grows with the input).
set -euo pipefail
cd "$(dirname "$0")/.."
out=$(go test -run '^$' -bench 'BenchmarkCorrelatorState' -benchtime 1x ./correlate/)
echo "$out"
echo
echo "$out" | awk '/peak-heap-MB/ { split($1, p, "/"); shape=p[2]; size=p[3]; sub(/-[0-9]+$/, "", size)
                                    for (i=1;i<=NF;i++) if ($(i+1)=="peak-heap-MB") v[shape, size]=$i; shapes[shape]=1 }
                   END { for (s in shapes) printf "%-15s peak heap %6.1f MB for 200k, %6.1f MB for 2M: ratio %.2f\n", s, v[s,"exchanges=200000"], v[s,"exchanges=2000000"], v[s,"exchanges=2000000"]/v[s,"exchanges=200000"] }'
