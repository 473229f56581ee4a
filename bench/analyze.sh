#!/usr/bin/env bash
# analyze against DuckDB running the equivalent SQL on the same files
# (issue 12): `analyze overview` and bench/overview.sql through
# bench/duckquery, on the dataset DIR, in alternated pairs.
#
#   bench/analyze.sh DIR [PAIRS]
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:?usage: bench/analyze.sh DIR [PAIRS]}
pairs=${2:-5}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go build -o "$tmp/analyze" ./cmd/analyze
go build -o "$tmp/duckquery" ./bench/duckquery
sed "s#DATA#$dir#g" bench/overview.sql >"$tmp/overview.sql"
for i in $(seq "$pairs"); do
  for cmd in "analyze" "duckquery"; do
    start=$(date +%s%N)
    if [ "$cmd" = analyze ]; then
      "$tmp/analyze" -data "$dir" -format json overview >/dev/null
    else
      "$tmp/duckquery" "$tmp/overview.sql" >/dev/null
    fi
    end=$(date +%s%N)
    echo "$cmd $(( (end - start) / 1000000 ))"
  done
done | awk '{t[$1] += $2; n[$1]++; print $1, $2, "ms"} END {a = t["analyze"] / n["analyze"]; d = t["duckquery"] / n["duckquery"];
  printf "mean: analyze %.0f ms, DuckDB SQL %.0f ms, ratio %.2f\n", a, d, a / d}'
