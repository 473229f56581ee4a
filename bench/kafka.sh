#!/usr/bin/env bash
# Throughput of ingest as a Kafka consumer (issue 9): records per second of
# one consumer, and the ratio of two consumers in one group to one.
#
# What it does: compiles the cmd/ingest tests once (go test -c) and runs
# BenchmarkKafkaConsumers (cmd/ingest/kafka_bench_test.go) from that test
# binary, one process per run, alternately "one" and "two" (A B A B ...,
# PAIRS pairs, default 3) so drift on the machine falls on both sides
# alike. Go runs the sub-benchmarks of one process in order (-count 4 gives
# one one one one two two two two), hence one process per run. Each run
# starts an in-process Kafka-protocol broker (kfake), produces about
# 100,000 synthetic wire-log records over 6 partitions (not timed), builds
# the ingest binary, and times the real binary consuming the topic with
# -kafka-until-caught-up into a fresh dataset and a fresh group, with the
# default flags otherwise (-workers: one per core, the default session
# timeout, heartbeats and commit interval). "one" is one consumer; "two"
# is two started together in one group, timed until both have exited.
# Every run checks that the consumers exited 0 and committed every
# partition's end offset; the script checks that every run wrote the same
# number of exchanges (nothing lost or doubled by the second consumer).
#
# How to read it: one line per run: wall seconds, records/s (records
# produced / wall seconds), CPU seconds of the consumers (user + system)
# and "cores used" (CPU / wall), records read (above the produced count
# when a rebalance made a consumer replay what the other had read), the
# dataset's exchanges, and the peak RSS of the largest consumer (GNU
# time's "Maximum resident set size" of the ingest binary, which the
# benchmark runs under /usr/bin/time: wait4's figure for a direct child of
# the test process would include the test process's own memory). Then each
# pair's ratio two/one, and the medians. 2.0 would be perfect scaling;
# both consumers run on the same machine here, each wanting every core
# (-workers defaults to the number of cores), so the ratio measures the
# cost of the group (joining, rebalancing, replaying) more than extra
# capacity: on N machines each consumer would have its own cores. The
# consumers' own lines (exit time, records read) are kept in the work
# directory and printed with DETAIL=1.
# The exit status is 0 when every run succeeded (whatever the ratio). The
# load average is printed before and after: other work on the machine
# makes the numbers meaningless (run it on an idle machine).
#
# Usage (from the repository root): bash bench/kafka.sh [PAIRS]
# Needs go, GNU time (/usr/bin/time; installed with apt-get when missing and
# running as root) and ~200 MB of free space in ${TMPDIR:-/tmp}. Takes
# about 40 s a pair on an idle 2-core machine. Not run by CI.
set -euo pipefail
cd "$(dirname "$0")/.."

pairs=${1:-3}
[[ $pairs =~ ^[1-9][0-9]*$ ]] || { echo "usage: bash bench/kafka.sh [PAIRS]  (PAIRS >= 1, default 3)" >&2; exit 2; }

name=kafka.sh
source bench/lib.sh # GNU time, $work (removed on exit), ingest built into it

echo "compiling the cmd/ingest tests into $work" >&2
go test -c -o "$work/ingest.test" ./cmd/ingest

# run SUB N: one process running BenchmarkKafkaConsumers/SUB once; prints
# the benchmark's metrics as "records/s wall-s cpu-s read exchanges rss-MiB".
run() {
	local sub=$1 n=$2 log="$work/$1-$2.txt"
	# the test binary runs in its package directory, as go test runs it
	if ! (cd cmd/ingest && "$work/ingest.test" -test.run '^$' -test.bench "^BenchmarkKafkaConsumers/$sub\$" \
		-test.benchtime 1x -test.count 1 -test.v) >"$log" 2>&1; then
		echo "kafka.sh: benchmark $sub failed (run $n):" >&2
		cat "$log" >&2
		exit 1
	fi
	awk -v sub_="$sub" '
		$1 ~ "^BenchmarkKafkaConsumers/" sub_ "(-[0-9]+)?$" && $2 ~ /^[0-9]+$/ {
			for (i = 3; i < NF; i++) m[$(i + 1)] = $i
			found = 1
		}
		END {
			if (!found || m["records/s"] == "" || m["peak-RSS-MiB"] == "") exit 1
			printf "%s %.2f %.2f %d %d %.1f\n", m["records/s"], m["ns/op"] / 1e9, m["cpu-s/op"], m["read/op"], m["exchanges/op"], m["peak-RSS-MiB"]
		}' "$log" || { echo "kafka.sh: no benchmark line in the output of run $n ($sub):" >&2; cat "$log" >&2; exit 1; }
}

median() { printf '%s\n' "$@" | LC_ALL=C sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

row() { # pair consumers "records/s wall cpu read exchanges rss"
	local rps wall cpu read exch rss
	read -r rps wall cpu read exch rss <<<"$3"
	printf '%-5s %-9s %8s %10.0f %8s %10s %10s %10s %13s\n' "$1" "$2" "$wall" "$rps" "$cpu" \
		"$(awk -v c="$cpu" -v w="$wall" 'BEGIN { printf "%.2f", c / w }')" "$read" "$exch" "$rss"
}

echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
echo
printf '%-5s %-9s %8s %10s %8s %10s %10s %10s %13s\n' pair consumers "wall s" "records/s" "cpu s" "cores used" read exchanges "peak RSS MiB"
r1=() r2=() ratios=() rss1=() exch=()
for ((i = 1; i <= pairs; i++)); do
	t=$(run one "$i"); row "$i" 1 "$t"; r1+=("${t%% *}"); rss1+=("${t##* }"); exch+=("$(awk '{ print $5 }' <<<"$t")")
	t=$(run two "$i"); row "$i" 2 "$t"; r2+=("${t%% *}"); exch+=("$(awk '{ print $5 }' <<<"$t")")
	ratios+=("$(awk -v a="${r1[-1]}" -v b="${r2[-1]}" 'BEGIN { printf "%.3f", b / a }')")
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"

if [[ -n ${DETAIL:-} ]]; then
	echo
	for ((i = 1; i <= pairs; i++)); do
		for sub in one two; do
			sed -n "s/^ *kafka_bench_test.go:[0-9]*: /pair $i $sub: /p" "$work/$sub-$i.txt"
		done
	done
fi

echo
records=$(sed -n 's/^ *kafka_bench_test.go:[0-9]*: \([0-9]*\) records over \([0-9]*\) partitions.*/\1 records over \2 partitions/p' "$work/one-1.txt")
echo "${records:-?}, $(nproc) cores, default -workers, $(go env GOVERSION)"
for ((i = 0; i < pairs; i++)); do
	printf 'pair %d: one %.0f records/s, two %.0f records/s, ratio two/one %s\n' $((i + 1)) "${r1[i]}" "${r2[i]}" "${ratios[i]}"
done
printf 'median records/s: one consumer %.0f, two consumers %.0f\n' "$(median "${r1[@]}")" "$(median "${r2[@]}")"
printf 'median ratio two/one = %.2f (per pair: %s)\n' "$(median "${ratios[@]}")" "${ratios[*]}"
printf 'median peak RSS of one consumer: %.1f MiB\n' "$(median "${rss1[@]}")"
if [[ $(printf '%s\n' "${exch[@]}" | sort -u | wc -l) -ne 1 ]]; then
	echo "kafka.sh: the runs wrote different numbers of exchanges: ${exch[*]}" >&2
	exit 1
fi
echo "exchanges: ${exch[0]} in every run"
