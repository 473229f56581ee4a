#!/usr/bin/env bash
# Throughput of ingest on one 200 MiB wire log at -workers 1 and -workers 2,
# and the ratio of the two (issue 8: target >= 1.7 on the 2-core machine).
#
# What it does: builds cmd/ingest, writes the log once with bench/genlog
# (realistic traffic of about 400 concurrent sessions, every outcome; see
# package internal/traffic) and reuses it for every run, then runs ingest alternately with -workers 1 and
# -workers 2 (A B A B ..., PAIRS pairs, default 3; each pair is followed by
# a one-core run, see below) so drift on the machine (page cache, other
# load, thermal) falls on all sides alike. Each run is timed with GNU time
# (/usr/bin/time, wall seconds), writes into an output directory removed
# before the next run (rm -rf: every run starts from an empty dataset), and
# uses a fixed pseudonym key (MCPTRACE_PSEUDONYM_KEY).
# The log is read from the page cache after the first run: this measures
# the engine, not the disk.
#
# Why one day (DAYS=1 by default): the question is whether one log is
# processed on all cores, and one day is the common case for one log (a
# day's traffic) and the hardest for the engine: every row lands in one date
# partition, so the output side cannot spread over partitions and any part
# of the path that is serial shows up in the ratio. It also keeps the cost
# of creating, fsyncing and renaming many files out of the number (bench/
# rss.sh covers many partitions). A second argument runs the same over
# DAYS days for comparison.
#
# How to read it: one line per run (MB/s is input bytes / wall seconds,
# 1 MB = 10^6 bytes, as go test -bench reports it; "cores used" is CPU
# seconds, user + system, over wall seconds: near 1.0 at -workers 2 means
# the run is serial somewhere), then the median of each side and the ratio
# median(workers 2) / median(workers 1). 2.0 is perfect scaling on two
# cores; below 1.7 misses the target. The script also checks that every
# run wrote all exchanges with a balanced summary, and says whether
# -workers 1 and -workers 2 wrote byte-identical exchange files.
#
# -workers sets the decode workers and correlator shards and, since the
# stages (line reading, decode, correlate, redact and write) run side by
# side, also the cores ingest may use (GOMAXPROCS). The script prints the
# median "cores used" at -workers 1 and the ceiling that leaves the ratio
# (cores / that): near 1.0 cores at -workers 1 is expected. Each round also
# has a third run, "1/1p": -workers 1 with GOMAXPROCS=1 set from outside,
# a check that the two ways of asking for one core agree. Runs go A B C A B
# C ... (A: -workers 1, B: -workers 2, C: 1/1p).
# The exit status is 0 when the runs succeeded (whatever the ratio). The
# load average is printed before and after (after includes the script's
# own runs, about 2 on two cores): other work on the machine makes the
# numbers meaningless (run it on an idle machine).
#
# Usage (from the repository root): bash bench/workers.sh [PAIRS] [DAYS]
# Needs GNU time (/usr/bin/time; installed with apt-get when missing and
# running as root), ~500 MB of free space in ${TMPDIR:-/tmp}. Not run by CI.
set -euo pipefail
cd "$(dirname "$0")/.."

pairs=${1:-3}
days=${2:-1}
mib=200
key=000102030405060708090a0b0c0d0e0f # fixed pseudonym key (hex)
[[ $pairs =~ ^[1-9][0-9]*$ ]] || { echo "usage: bash bench/workers.sh [PAIRS] [DAYS]  (PAIRS >= 1, default 3)" >&2; exit 2; }
[[ $days =~ ^[1-9][0-9]*$ ]] || { echo "usage: bash bench/workers.sh [PAIRS] [DAYS]  (DAYS >= 1, default 1)" >&2; exit 2; }

name=workers.sh
# shellcheck source=bench/lib.sh
source "$(dirname "$0")/lib.sh"

log="$work/wire.ndjson"
"$work/genlog" -mib "$mib" -days 1 -o "$log" 2>"$work/genlog.txt"
if [[ $days -gt 1 ]]; then
	# an even spread over the days needs -exchanges (see bench/rss.sh)
	n=$(awk '/^genlog:/ { print $2 }' "$work/genlog.txt")
	"$work/genlog" -exchanges "$n" -mib 0 -days "$days" -o "$log" 2>"$work/genlog.txt"
fi
exchanges=$(awk '/^genlog:/ { print $2 }' "$work/genlog.txt")
size=$(stat -c %s "$log")
echo "input: $size bytes, $exchanges exchanges over $days day(s); $pairs pairs" >&2

# run WORKERS N [GOMAXPROCS]: one timed ingest; prints "wall-seconds cpu-seconds"
# (cpu: user + system), leaves the exchange files' checksum in
# $work/sum-WORKERS.
run() {
	local w=$1 n=$2 procs=${3:-} out="$work/out"
	rm -rf "$out"
	if ! MCPTRACE_PSEUDONYM_KEY=$key env ${procs:+GOMAXPROCS=$procs} /usr/bin/time -f "%e %U %S" -o "$work/time.txt" \
		"$work/ingest" -quiet -workers "$w" -out "$out" "$log" >"$work/summary.txt" 2>"$work/stderr.txt"; then
		echo "workers.sh: ingest -workers $w failed (run $n):" >&2
		cat "$work/stderr.txt" "$work/summary.txt" >&2
		exit 1
	fi
	local written
	written=$(awk '/^  exchanges:/ { print $2 }' "$work/summary.txt")
	if [[ $written != "$exchanges" ]] || ! grep -q '\[OK\]' "$work/summary.txt"; then
		echo "workers.sh: ingest -workers $w wrote $written of $exchanges exchanges or did not balance (run $n):" >&2
		cat "$work/summary.txt" >&2
		exit 1
	fi
	(cd "$out/exchanges" && find . -type f -name '*.parquet' | LC_ALL=C sort | xargs sha256sum) >"$work/sum-$w.new"
	if [[ -f "$work/sum-$w" ]] && ! cmp -s "$work/sum-$w" "$work/sum-$w.new"; then
		echo "workers.sh: note: two runs at -workers $w wrote different exchange files" >&2
	fi
	mv "$work/sum-$w.new" "$work/sum-$w"
	rm -rf "$out"
	tail -n 1 "$work/time.txt" | awk '{ printf "%s %.2f\n", $1, $2 + $3 }'
}

mbps() { awk -v b="$size" -v s="$1" 'BEGIN { printf "%.1f", b / 1e6 / s }'; }
median() { printf '%s\n' "$@" | LC_ALL=C sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

cores() { awk -v c="${1#* }" -v w="${1%% *}" 'BEGIN { printf "%.2f", c / w }'; }
row() { # run workers "wall cpu" mb/s
	local wall cpu
	read -r wall cpu <<<"$3"
	printf '%-5s %-8s %8s %8s %10s %8s\n' "$1" "$2" "$wall" "$cpu" "$(cores "$3")" "$4"
}

echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
echo
printf '%-5s %-8s %8s %8s %10s %8s\n' run workers "wall s" "cpu s" "cores used" "MB/s"
r1=() r2=() r1p=() c1=() c2=() c1p=()
for ((i = 1; i <= pairs; i++)); do
	t=$(run 1 "$i"); r1+=("$(mbps "${t%% *}")"); c1+=("$(cores "$t")"); row "$i" 1 "$t" "${r1[-1]}"
	t=$(run 2 "$i"); r2+=("$(mbps "${t%% *}")"); c2+=("$(cores "$t")"); row "$i" 2 "$t" "${r2[-1]}"
	t=$(run 1 "$i" 1); r1p+=("$(mbps "${t%% *}")"); c1p+=("$(cores "$t")"); row "$i" 1/1p "$t" "${r1p[-1]}"
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"

m1=$(median "${r1[@]}")
m2=$(median "${r2[@]}")
m1p=$(median "${r1p[@]}")
echo
echo "$(( size >> 20 )) MiB wire log over $days day(s), $exchanges exchanges, $(nproc) cores, $(go env GOVERSION)"
printf 'median MB/s: workers 1 %.1f, workers 2 %.1f, workers 1 on one core (GOMAXPROCS=1) %.1f\n' "$m1" "$m2" "$m1p"
awk -v a="$m1" -v b="$m2" 'BEGIN { r = b / a; printf "ratio workers2/workers1 = %.2f (target >= 1.7: %s)\n", r, (r >= 1.7 ? "met" : "NOT met") }'
awk -v u1="$(median "${c1[@]}")" -v u2="$(median "${c2[@]}")" -v n="$(nproc)" \
	'BEGIN { printf "median cores used: workers 1 %.2f, workers 2 %.2f; with %.2f of %d cores busy at workers 1 the ratio cannot exceed about %.2f here\n", u1, u2, u1, n, n / u1 }'
awk -v a="$m1p" -v b="$m2" -v u="$(median "${c1p[@]}")" \
	'BEGIN { printf "one core to two: workers 2 / workers 1 at GOMAXPROCS=1 = %.2f (that run used %.2f cores)\n", b / a, u }'
if cmp -s "$work/sum-1" "$work/sum-2"; then
	echo "exchange files: byte-identical at -workers 1 and -workers 2"
else
	echo "exchange files: DIFFER between -workers 1 and -workers 2"
fi
