#!/usr/bin/env bash
# Peak memory of one ingest run against the issue 8 bound: a 200 MiB wire
# log spread over 1,000 date partitions must peak at 256 MiB RSS or less.
#
# What it does: builds cmd/ingest, writes two synthetic wire logs of the
# same 200 MiB (bench/genlog), one over 1,000 days and one over 4 days, runs
# ingest on each under GNU time (`/usr/bin/time -v`) with the default
# -workers (one per core) and a fixed pseudonym key, and prints one table
# row per run: date partitions and exchange files written, exchanges, wall
# time and peak RSS ("Maximum resident set size"), with PASS/FAIL against
# the bound.
#
# How to read it: the 1,000-day row is the acceptance number, and the exit
# status follows it (0: PASS, 1: FAIL). The 4-day row is a control: the
# same bytes in few partitions. If memory does not grow with partitions the
# two peaks are close (the "1000 days / 4 days" ratio near 1.0); a ratio
# well above 1 means each partition costs memory. A control that is itself
# over the bound means the memory goes elsewhere than partitions.
#
# About the logs (bench/genlog, package internal/traffic): realistic
# traffic, about 400 sessions open at once, records of about 3 KB, every
# outcome. With -days D genlog cuts the traffic into D equal slices, one
# per calendar day at the same time of day (by exchanges with -exchanges,
# else by bytes), so a log over 1,000 days has about 70 exchanges a day and
# each session's conversation ends by idle timeout between its days. The
# script counts the exchanges that fit in 200 MiB once and writes each log
# with -exchanges N, so both logs hold the same exchanges (the same traffic;
# only the times differ, and the sizes by the keep-alive pings of GET
# streams left open over the jumps). The first timestamp is 10:00 on the
# first day and each slice stays within its day: the partitions column
# shows D (1,000 for 1,000 days).
#
# Usage (from the repository root): bash bench/rss.sh
# Needs GNU time (/usr/bin/time; installed with apt-get when missing and
# running as root), ~1 GB of free space in ${TMPDIR:-/tmp}. Not run by CI.
set -euo pipefail
cd "$(dirname "$0")/.."

mib=200
bound_mib=256
day_counts=(1000 4) # the first is the acceptance run, the second the control
key=000102030405060708090a0b0c0d0e0f # fixed pseudonym key (hex): runs are comparable

name=rss.sh
# shellcheck source=bench/lib.sh
source "$(dirname "$0")/lib.sh"

# How many exchanges fit in $mib MiB (their size does not depend on -days:
# timestamps are fixed-width).
"$work/genlog" -mib "$mib" -days 1 -o "$work/calibrate.ndjson" 2>"$work/genlog.txt"
exchanges=$(awk '/^genlog:/ { print $2 }' "$work/genlog.txt")
rm -f "$work/calibrate.ndjson"
[[ $exchanges =~ ^[0-9]+$ ]] || { echo "rss.sh: cannot read the exchange count from genlog: $(cat "$work/genlog.txt")" >&2; exit 1; }

# wall seconds from GNU time's "h:mm:ss" or "m:ss.ss"
to_seconds() { awk -F: '{ s = 0; for (i = 1; i <= NF; i++) s = s * 60 + $i; printf "%.2f", s }' <<<"$1"; }

rows=()
declare -A rss_of
status=0
for days in "${day_counts[@]}"; do
	log="$work/wire-$days.ndjson"
	out="$work/out-$days"
	"$work/genlog" -exchanges "$exchanges" -mib 0 -days "$days" -o "$log" 2>>"$work/genlog.txt"
	size=$(stat -c %s "$log")
	echo "ingesting $(( size >> 20 )) MiB over $days days ($exchanges exchanges)" >&2
	if ! MCPTRACE_PSEUDONYM_KEY=$key /usr/bin/time -v -o "$work/time-$days.txt" \
		"$work/ingest" -quiet -out "$out" "$log" >"$work/summary-$days.txt" 2>"$work/stderr-$days.txt"; then
		echo "rss.sh: ingest failed on the $days-day log:" >&2
		cat "$work/stderr-$days.txt" "$work/summary-$days.txt" "$work/time-$days.txt" >&2
		exit 1
	fi
	if ! grep -q '\[OK\]' "$work/summary-$days.txt"; then
		echo "rss.sh: the summary's conservation check did not say [OK]:" >&2
		cat "$work/summary-$days.txt" >&2
		exit 1
	fi
	rss_kb=$(awk -F': ' '/Maximum resident set size/ { print $2 }' "$work/time-$days.txt")
	wall=$(to_seconds "$(awk -F': ' '/Elapsed \(wall clock\)/ { print $2 }' "$work/time-$days.txt")")
	written=$(awk '/^  exchanges:/ { print $2 }' "$work/summary-$days.txt")
	partitions=$(find "$out/exchanges" -mindepth 1 -maxdepth 1 -type d -name 'dt=*' | wc -l)
	files=$(find "$out/exchanges" -type f -name '*.parquet' | wc -l)
	rss_mib=$(awk -v k="$rss_kb" 'BEGIN { printf "%.1f", k / 1024 }')
	rss_of[$days]=$rss_mib
	verdict=PASS
	if awk -v r="$rss_mib" -v b="$bound_mib" 'BEGIN { exit !(r > b) }'; then
		verdict=FAIL
		if [[ $days -eq ${day_counts[0]} ]]; then status=1; fi
	fi
	rows+=("$(printf '%-22s %10s %14s %10s %8s %13s %6s' \
		"$(( size >> 20 )) MiB over $days days" "$partitions" "$files" "$written" "$wall" "$rss_mib" "$verdict")")
	rm -rf "$out" "$log"
done

echo
echo "peak RSS of ingest, bound $bound_mib MiB ($(nproc) cores, default -workers, $(go env GOVERSION))"
printf '%-22s %10s %14s %10s %8s %13s %6s\n' "input" "partitions" "exchange files" "exchanges" "wall s" "peak RSS MiB" "result"
printf '%s\n' "${rows[@]}"
awk -v a="${rss_of[${day_counts[0]}]}" -v b="${rss_of[${day_counts[1]}]}" -v da="${day_counts[0]}" -v db="${day_counts[1]}" \
	'BEGIN { printf "peak RSS %d days / %d days = %.2f (1.0: memory does not grow with partitions)\n", da, db, a / b }'
exit $status
