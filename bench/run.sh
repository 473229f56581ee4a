#!/usr/bin/env bash
# ingest against DuckDB's plain NDJSON-to-Parquet conversion of the same
# files, in one run (issue 11), and the issue's other targets; writes
# bench/RESULTS.md. Full description: bench/README.md.
#
# What it does: builds ingest, genlog and duckconv (bench/lib.sh), writes
# client-side wire logs of each size in SIZES (MiB; default 1 GiB and
# 4 GiB) and a HAR of HAR_MIB (default 300 MiB) with genlog, and for each
# file runs ingest and duckconv alternately (A B A B ..., PAIRS pairs,
# default 5) under GNU time (/usr/bin/time -v), each run into a fresh
# output, the file read once beforehand so every run reads it from the page
# cache. Then -workers 1 against -workers 2 on the first wire log
# (alternated, PAIRS pairs), ingest's peak memory on genlog's two memory
# shapes (200,000 never-finished conversations; one SSE body of 1,000,000
# events), and two go test benchmarks (classification per core, allocations
# per record on the wire path).
#
# Usage (from anywhere): bash bench/run.sh [options]
#   --sizes LIST     wire log sizes in MiB, comma-separated (SIZES; default 1024,4096)
#   --har-mib N      HAR size in MiB, 0: none (HAR_MIB; default 300)
#   --pairs N        pairs per file (PAIRS; default 5)
#   --dir DIR        directory the work directory is made in (BENCH_DIR; default ${TMPDIR:-/tmp});
#                    the work directory is removed at the end
#   --results FILE   where the report goes (RESULTS; default bench/RESULTS.md)
#   --seed N         genlog seed (SEED; default 1), --sessions N (SESSIONS; default 400)
#   --no-workers     skip the -workers 1/2 runs (WORKERS_RUNS=0)
#   --no-memory      skip the memory-shape runs (MEMORY_RUNS=0)
#   --no-benchmarks  skip the go test benchmarks (BENCHMARKS=0)
#   GENLOG=BINARY    use that generator (genlog's flags) instead of building bench/genlog
# A quick check of the script: bash bench/run.sh --sizes 50 --har-mib 20 --pairs 2
# Needs go, a C compiler (DuckDB), GNU time, and free space for the logs
# (the script warns when there is less). Takes about 40 minutes at the
# default sizes on a 2-core machine. Not run by CI.
set -euo pipefail
shopt -s inherit_errexit # a failure inside $(...) stops the script too
cd "$(dirname "$0")/.."
root=$PWD

sizes=${SIZES:-1024,4096}
har_mib=${HAR_MIB:-300}
pairs=${PAIRS:-5}
bench_dir=${BENCH_DIR:-${TMPDIR:-/tmp}}
results=${RESULTS:-bench/RESULTS.md}
seed=${SEED:-1}
sessions=${SESSIONS:-400}
workers_runs=${WORKERS_RUNS:-1}
memory_runs=${MEMORY_RUNS:-1}
benchmarks=${BENCHMARKS:-1}

usage() { sed -n '/^# Usage/,/^# Needs/p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
while [[ $# -gt 0 ]]; do
	case $1 in
	--sizes) sizes=$2; shift 2 ;;
	--har-mib) har_mib=$2; shift 2 ;;
	--pairs) pairs=$2; shift 2 ;;
	--dir) bench_dir=$2; shift 2 ;;
	--results) results=$2; shift 2 ;;
	--seed) seed=$2; shift 2 ;;
	--sessions) sessions=$2; shift 2 ;;
	--no-workers) workers_runs=0; shift ;;
	--no-memory) memory_runs=0; shift ;;
	--no-benchmarks) benchmarks=0; shift ;;
	-h | --help) usage ;;
	*) echo "run.sh: unknown option $1" >&2; usage ;;
	esac
done
IFS=, read -r -a size_list <<<"$sizes"
for s in "${size_list[@]}" "$har_mib" "$pairs" "$seed" "$sessions"; do
	[[ $s =~ ^[0-9]+$ ]] || { echo "run.sh: $s is not a whole number" >&2; usage; }
done
[[ ${#size_list[@]} -ge 1 && $pairs -ge 1 ]] || usage
[[ -d $bench_dir ]] || { echo "run.sh: --dir $bench_dir is not a directory" >&2; exit 2; }
case $results in /*) ;; *) results=$root/$results ;; esac

# Free space: the logs (each written, measured, then removed, except the
# first wire log, kept for the -workers runs) plus the outputs.
need_mib=$((har_mib + 200))
for s in "${size_list[@]}"; do need_mib=$((need_mib + s)); done
[[ $memory_runs == 0 ]] || need_mib=$((need_mib + 2048)) # the memory shapes' logs, size unknown in advance
free_mib=$(($(df -Pk "$bench_dir" | awk 'NR == 2 { print $4 }') / 1024))
if [[ $free_mib -lt $need_mib ]]; then
	echo "run.sh: warning: $free_mib MiB free in $bench_dir, the run needs about $need_mib MiB" >&2
fi

name=run.sh
work_parent=$bench_dir
build_duckconv=1
# shellcheck source=bench/lib.sh
source bench/lib.sh

key=000102030405060708090a0b0c0d0e0f # fixed pseudonym key (hex): runs are comparable
genlog=${GENLOG:-$work/genlog} # GENLOG: another generator binary with genlog's flags (one from another branch, say)
genlog_help=$("$genlog" -h 2>&1 || true)
has_flag() { grep -qE "^[[:space:]]+-$1([[:space:]]|$)" <<<"$genlog_help"; }

# gen FORMAT MIB FILE: a client-side log of about MIB MiB. Returns 3 when
# this genlog cannot write FORMAT; stops the script when genlog fails.
gen() {
	local format=$1 mib=$2 file=$3
	local cmd=("$genlog" -mib "$mib" -sessions "$sessions" -o "$file")
	if has_flag format; then
		cmd=("$genlog" -format "$format" -side client -seed "$seed" -mib "$mib" -sessions "$sessions" -o "$file")
	elif [[ $format != wire ]]; then
		return 3 # this genlog writes wire logs only
	fi
	if ! "${cmd[@]}" 2>>"$work/genlog.txt"; then
		echo "run.sh: genlog failed: ${cmd[*]}" >&2
		tail -n 5 "$work/genlog.txt" >&2
		exit 1
	fi
}

# warm FILE: read it once so the runs read it from the page cache.
warm() { cat "$1" >/dev/null; }

# timed TAG CMD...: runs CMD under GNU time, stdout and stderr into
# $work/TAG.out and $work/TAG.err; prints "wall-s cpu-s peak-rss-MiB" (cpu:
# user + system). A failed run stops the script with its output.
timed() {
	local tag=$1
	shift
	if ! /usr/bin/time -v -o "$work/$tag.time" "$@" >"$work/$tag.out" 2>"$work/$tag.err"; then
		echo "run.sh: $tag failed: $*" >&2
		tail -n 20 "$work/$tag.err" "$work/$tag.out" "$work/$tag.time" >&2
		exit 1
	fi
	awk -F': ' '
		/Elapsed \(wall clock\)/ { n = split($2, p, ":"); w = 0; for (i = 1; i <= n; i++) w = w * 60 + p[i] }
		/User time \(seconds\)/ { u = $2 }
		/System time \(seconds\)/ { s = $2 }
		/Maximum resident set size/ { r = $2 }
		END { printf "%.2f %.2f %.1f\n", w, u + s, r / 1024 }' "$work/$tag.time"
}

# ingest_run TAG FILE [FLAGS...]: one ingest into a fresh dataset; checks
# the summary balances; leaves its record count in $work/TAG.records.
ingest_run() {
	local tag=$1 file=$2
	shift 2
	rm -rf "$work/out-ingest"
	local t
	t=$(MCPTRACE_PSEUDONYM_KEY=$key timed "$tag" "$work/ingest" -quiet "$@" -out "$work/out-ingest" "$file") || exit 1
	if ! grep -q '\[OK\]' "$work/$tag.out"; then
		echo "run.sh: $tag: the summary's conservation check did not say [OK]:" >&2
		cat "$work/$tag.out" >&2
		exit 1
	fi
	awk '/^  inputs:/ { print $4 }' "$work/$tag.out" >"$work/$tag.records"
	rm -rf "$work/out-ingest"
	echo "$t"
}

# duck_run TAG FILE FORMAT: one duckconv into a fresh Parquet file; leaves
# its row count in $work/TAG.records.
duck_run() {
	local tag=$1 file=$2 format=$3
	rm -f "$work/out-duck.parquet"
	local t
	t=$(timed "$tag" "$work/duckconv" -format "$format" "$file" "$work/out-duck.parquet") || exit 1
	sed -n 's/^duckconv: \([0-9]*\) rows written.*/\1/p' "$work/$tag.err" >"$work/$tag.records"
	[[ -s $work/duckdb-version ]] || sed -n 's/^duckconv: DuckDB \([^,]*\), threads \([0-9]*\).*/\1, \2 threads/p' "$work/$tag.err" >"$work/duckdb-version"
	rm -f "$work/out-duck.parquet"
	echo "$t"
}

median() { printf '%s\n' "$@" | LC_ALL=C sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
maxof() { printf '%s\n' "$@" | LC_ALL=C sort -g | tail -n 1; }
calc() { awk "BEGIN { printf \"$1\", $2 }"; }
verdict() { if awk "BEGIN { exit !($1) }"; then echo PASS; else echo FAIL; fi; }
mib_label() { echo "$1 MiB"; }

load_before=$(cut -d' ' -f1-3 /proc/loadavg)
started=$(date -u +%Y-%m-%dT%H:%M:%SZ)
main_rows=()    # the per-file table
ratio_rows=()   # the per-file ratios
declare -A ratio_of rss_max_of rss_med_of

# compare LABEL FILE KIND DUCKFORMAT [INGEST FLAGS...]: PAIRS pairs of
# ingest and duckconv on FILE, alternated; adds the file's rows to the
# tables.
compare() {
	local label=$1 file=$2 kind=$3 dformat=$4
	shift 4
	local bytes iw=() ic=() ir=() dw=() dc=() dr=() ratios=() t w c r i
	bytes=$(stat -c %s "$file")
	warm "$file"
	echo "$label: $bytes bytes, $pairs pairs (ingest, DuckDB alternated)" >&2
	for ((i = 1; i <= pairs; i++)); do
		t=$(ingest_run "ingest-$kind-$i" "$file" "$@") || exit 1
		read -r w c r <<<"$t"
		iw+=("$w") ic+=("$c") ir+=("$r")
		t=$(duck_run "duck-$kind-$i" "$file" "$dformat") || exit 1
		read -r w c r <<<"$t"
		dw+=("$w") dc+=("$c") dr+=("$r")
		ratios+=("$(calc %.3f "${iw[-1]} / ${dw[-1]}")")
		printf '  pair %d: ingest %6.2f s (%.2f cpu s, %.0f MiB), DuckDB %6.2f s (%.2f cpu s, %.0f MiB), ratio %s\n' \
			"$i" "${iw[-1]}" "${ic[-1]}" "${ir[-1]}" "${dw[-1]}" "${dc[-1]}" "${dr[-1]}" "${ratios[-1]}" >&2
	done
	local irec drec
	irec=$(cat "$work/ingest-$kind-1.records") drec=$(cat "$work/duck-$kind-1.records")
	if [[ $irec != "$drec" ]]; then
		echo "run.sh: note: $label: ingest read $irec records, DuckDB wrote $drec rows" >&2
	fi
	local tool mw mc
	for tool in ingest DuckDB; do
		if [[ $tool == ingest ]]; then
			mw=$(median "${iw[@]}") mc=$(median "${ic[@]}")
			main_rows+=("$(printf '| %s | ingest | %s | %.2f | %.1f | %.1f | %.2f | %.0f | %.0f |' "$label" "$irec" "$mw" \
				"$(calc %.3f "$bytes / 1e6 / $mw")" "$(calc %.3f "$bytes / 1e6 / $mc")" "$(calc %.3f "$mc / $mw")" \
				"$(maxof "${ir[@]}")" "$(median "${ir[@]}")")")
		else
			mw=$(median "${dw[@]}") mc=$(median "${dc[@]}")
			main_rows+=("$(printf '| %s | DuckDB | %s | %.2f | %.1f | %.1f | %.2f | %.0f | %.0f |' "$label" "$drec" "$mw" \
				"$(calc %.3f "$bytes / 1e6 / $mw")" "$(calc %.3f "$bytes / 1e6 / $mc")" "$(calc %.3f "$mc / $mw")" \
				"$(maxof "${dr[@]}")" "$(median "${dr[@]}")")")
		fi
	done
	ratio_of[$label]=$(median "${ratios[@]}")
	rss_max_of[$label]=$(maxof "${ir[@]}")
	rss_med_of[$label]=$(median "${ir[@]}")
	ratio_rows+=("| $label | $(calc %.2f "${ratio_of[$label]}") | ${ratios[*]} |")
}

# workers_compare FILE: -workers 1 against -workers 2, alternated.
workers_rows=()
workers_ratio=""
workers_compare() {
	local file=$1 w1=() w2=() c1=() c2=() ratios=() t w c r i bytes
	bytes=$(stat -c %s "$file")
	warm "$file"
	echo "workers: -workers 1 against -workers 2 on $(mib_label "${size_list[0]}"), $pairs pairs" >&2
	for ((i = 1; i <= pairs; i++)); do
		t=$(ingest_run "workers1-$i" "$file" -workers 1) || exit 1
		read -r w c r <<<"$t"
		w1+=("$w") c1+=("$c")
		t=$(ingest_run "workers2-$i" "$file" -workers 2) || exit 1
		read -r w c r <<<"$t"
		w2+=("$w") c2+=("$c")
		ratios+=("$(calc %.3f "${w1[-1]} / ${w2[-1]}")")
		printf '  pair %d: -workers 1 %6.2f s, -workers 2 %6.2f s, speed-up %s\n' "$i" "${w1[-1]}" "${w2[-1]}" "${ratios[-1]}" >&2
	done
	local m
	m=$(median "${w1[@]}")
	workers_rows+=("$(printf '| 1 | %.2f | %.1f | %.2f |' "$m" "$(calc %.3f "$bytes / 1e6 / $m")" "$(calc %.3f "$(median "${c1[@]}") / $m")")")
	m=$(median "${w2[@]}")
	workers_rows+=("$(printf '| 2 | %.2f | %.1f | %.2f |' "$m" "$(calc %.3f "$bytes / 1e6 / $m")" "$(calc %.3f "$(median "${c2[@]}") / $m")")")
	workers_ratio=$(median "${ratios[@]}")
	workers_pairs="${ratios[*]}"
}

# The wire logs.
for idx in "${!size_list[@]}"; do
	mib=${size_list[idx]}
	log="$work/wire-$mib.ndjson"
	echo "generating a $mib MiB client-side wire log" >&2
	gen wire "$mib" "$log"
	compare "wire $(mib_label "$mib")" "$log" "wire-$mib" newline_delimited
	if [[ $idx -eq 0 && $workers_runs != 0 ]]; then
		workers_compare "$log"
	fi
	rm -f "$log"
done

# The HAR.
har_note=""
if [[ $har_mib -gt 0 ]]; then
	har="$work/client.har"
	echo "generating a $har_mib MiB HAR" >&2
	st=0
	gen har "$har_mib" "$har" || st=$?
	if [[ $st -eq 0 ]]; then
		# The whole document must fit ingest's document limit (256 MiB by
		# default) for the comparison to mean anything.
		maxdoc=$(($(stat -c %s "$har") + (1 << 20)))
		[[ $maxdoc -gt 268435456 ]] || maxdoc=268435456
		compare "HAR $(mib_label "$har_mib")" "$har" har har -max-document "$maxdoc"
		rm -f "$har"
	else
		har_note="skipped: this genlog has no -format flag (it writes wire logs only)"
		echo "run.sh: HAR $har_note" >&2
	fi
fi

# Memory shapes: ingest's peak RSS on logs shaped to hold state.
mem_rows=()
declare -A mem_rss
if [[ $memory_runs != 0 ]]; then
	shapes=("open-conversations:-conversations:200000:512" "long-sse:-events:1000000:256")
	for spec in "${shapes[@]}"; do
		IFS=: read -r shape flag count bound <<<"$spec"
		if ! has_flag shape || ! has_flag "${flag#-}"; then
			mem_rows+=("| $shape ($flag $count) | — | — | $bound | skipped: this genlog has no -shape $shape |")
			echo "run.sh: memory shape $shape skipped: this genlog has no -shape or $flag flag" >&2
			continue
		fi
		log="$work/shape-$shape.ndjson"
		echo "generating the $shape shape ($flag $count)" >&2
		if ! "$genlog" -format wire -side client -seed "$seed" -shape "$shape" "$flag" "$count" -o "$log" 2>>"$work/genlog.txt"; then
			echo "run.sh: genlog failed on the $shape shape:" >&2
			tail -n 5 "$work/genlog.txt" >&2
			exit 1
		fi
		warm "$log"
		# The long-sse shape is one line of about 220 MB holding a body of
		# about 200 MB: past the default -max-line and -max-body, which would
		# quarantine it and measure nothing.
		t=$(ingest_run "shape-$shape" "$log" -max-line $((512 << 20)) -max-body $((512 << 20))) || exit 1
		if ! grep -q 'quarantined: *0 records' "$work/shape-$shape.out"; then
			echo "run.sh: shape-$shape: ingest quarantined records, so its memory says nothing:" >&2
			cat "$work/shape-$shape.out" >&2
			exit 1
		fi
		read -r w c r <<<"$t"
		mem_rss[$shape]=$r
		mem_rows+=("$(printf '| %s (%s %s) | %.0f | %.2f | %s | %.0f |' "$shape" "$flag" "$count" "$(calc %.3f "$(stat -c %s "$log") / 1048576")" "$w" "$bound" "$r")")
		rm -f "$log"
	done
fi

# The go test benchmarks with targets.
classify_rps="" allocs_rec=""
if [[ $benchmarks != 0 ]]; then
	echo "running BenchmarkClassify/mix and BenchmarkWireAllocs (go test -bench, -count 3)" >&2
	(cd "$root" && go test ./classify -run '^$' -bench 'BenchmarkClassify/mix$' -benchmem -count 3) >"$work/bench-classify.txt" 2>&1 ||
		{ echo "run.sh: the classify benchmark failed:" >&2; cat "$work/bench-classify.txt" >&2; exit 1; }
	(cd "$root" && go test ./pipeline -run '^$' -bench 'BenchmarkWireAllocs$' -benchmem -count 3) >"$work/bench-allocs.txt" 2>&1 ||
		{ echo "run.sh: the pipeline benchmark failed:" >&2; cat "$work/bench-allocs.txt" >&2; exit 1; }
	metric() { awk -v m="$2" '/^Benchmark/ { for (i = 3; i <= NF; i++) if ($i == m) print $(i - 1) }' "$1"; }
	mapfile -t v < <(metric "$work/bench-classify.txt" responses/s/core)
	[[ ${#v[@]} -gt 0 ]] && classify_rps=$(median "${v[@]}")
	mapfile -t v < <(metric "$work/bench-allocs.txt" allocs/record)
	[[ ${#v[@]} -gt 0 ]] && allocs_rec=$(median "${v[@]}")
fi
load_after=$(cut -d' ' -f1-3 /proc/loadavg)

# The report.
first="wire $(mib_label "${size_list[0]}")"
last="wire $(mib_label "${size_list[-1]}")"
harl="HAR $(mib_label "$har_mib")"
standard=1
[[ $sizes == 1024,4096 && $har_mib == 300 && $pairs -ge 5 ]] || standard=0
targets=()
target() { targets+=("| $1 | $2 | $3 |"); }
r=${ratio_of[$first]}
target "ingest on the $first log at most 1.0× DuckDB's time (aim 0.67×)" "$(calc %.2f× "$r")" "$(verdict "$r <= 1.0")"
rss_ok="${rss_max_of[$first]} <= 256"
rss_text="$(calc %.0f "${rss_max_of[$first]}") MiB"
if [[ $first != "$last" ]]; then
	rss_ok="$rss_ok && ${rss_max_of[$last]} <= 256 && ${rss_med_of[$last]} / ${rss_med_of[$first]} <= 1.2"
	rss_text="$rss_text at ${first#wire }, $(calc %.0f "${rss_max_of[$last]}") MiB at ${last#wire } (median ratio $(calc %.2f "${rss_med_of[$last]} / ${rss_med_of[$first]}"))"
fi
rss_target="ingest peak RSS at most 256 MiB, the same at every size"
[[ $first == "$last" ]] || rss_target="$rss_target (here: median at ${last#wire } / median at ${first#wire } at most 1.2)"
target "$rss_target" "$rss_text" "$(verdict "$rss_ok")"
for spec in "open-conversations:512:200,000 never-finished conversations within 512 MiB" "long-sse:256:one SSE body of 1,000,000 events within 256 MiB"; do
	IFS=: read -r shape bound text <<<"$spec"
	if [[ -n ${mem_rss[$shape]:-} ]]; then
		target "$text" "$(calc %.0f "${mem_rss[$shape]}") MiB" "$(verdict "${mem_rss[$shape]} <= $bound")"
	else
		target "$text" "not measured" "—"
	fi
done
if [[ -n ${ratio_of[$harl]:-} ]]; then
	target "HAR: at most 0.5× DuckDB's time and at most 256 MiB peak RSS" \
		"$(calc %.2f× "${ratio_of[$harl]}"), $(calc %.0f "${rss_max_of[$harl]}") MiB" "$(verdict "${ratio_of[$harl]} <= 0.5 && ${rss_max_of[$harl]} <= 256")"
else
	target "HAR: at most 0.5× DuckDB's time and at most 256 MiB peak RSS" "not measured${har_note:+ ($har_note)}" "—"
fi
if [[ -n $workers_ratio ]]; then
	target "-workers 2 at least 1.7× faster than -workers 1 on one file" "$(calc %.2f× "$workers_ratio")" "$(verdict "$workers_ratio >= 1.7")"
else
	target "-workers 2 at least 1.7× faster than -workers 1 on one file" "not measured" "—"
fi
if [[ -n $classify_rps ]]; then
	target "classification at least 5,000,000 responses/s per core (BenchmarkClassify/mix)" "$(calc %.0f "$classify_rps")" "$(verdict "$classify_rps >= 5000000")"
	target "fewer than 20 allocations per input record on the wire path (BenchmarkWireAllocs)" "$(calc %.1f "$allocs_rec")" "$(verdict "$allocs_rec < 20")"
else
	target "classification at least 5,000,000 responses/s per core (BenchmarkClassify/mix)" "not measured" "—"
	target "fewer than 20 allocations per input record on the wire path (BenchmarkWireAllocs)" "not measured" "—"
fi

commit=$(git -C "$root" rev-parse --short=12 HEAD 2>/dev/null || echo unknown)
git -C "$root" diff --quiet HEAD 2>/dev/null || commit="$commit (with uncommitted changes)"
genlog_kind="genlog with -format (the traffic generator)"
has_flag format || genlog_kind="genlog without -format (internal/synth: wire logs only, about 1 KB a record)"
{
	echo "# ingest against DuckDB: results of bench/run.sh"
	echo
	if [[ $standard == 0 ]]; then
		echo "**Not the issue's measurement: a run at sizes ${sizes} MiB, HAR ${har_mib} MiB, ${pairs} pairs (the issue's: 1024,4096 MiB, HAR 300 MiB, 5 pairs).**"
		echo
	fi
	echo "## Machine"
	echo
	echo "| | |"
	echo "| --- | --- |"
	echo "| CPU | $(lscpu | sed -n 's/^Model name: *//p' | head -n 1) |"
	echo "| cores | $(nproc) |"
	echo "| memory | $(awk '/^MemTotal/ { printf "%.1f GiB", $2 / 1048576 }' /proc/meminfo) |"
	echo "| kernel | $(uname -sr) |"
	echo "| Go | $(go env GOVERSION) |"
	echo "| DuckDB | $(cat "$work/duckdb-version" 2>/dev/null || echo ?) (github.com/duckdb/duckdb-go/v2) |"
	echo "| date | $started |"
	echo "| commit | $commit |"
	echo "| load average | before $load_before, after $load_after |"
	echo "| inputs | $genlog_kind, seed $seed, $sessions sessions |"
	echo
	echo "## ingest and DuckDB on the same files"
	echo
	echo "Medians of $pairs runs each, ingest and DuckDB alternated (A B A B ...), every file read from the page cache."
	echo "MB/s is input bytes (10^6) over wall seconds; MB/s per core is input bytes over CPU seconds (user + system);"
	echo "cores used is CPU over wall seconds; peak RSS is GNU time's maximum resident set size. ingest runs with its"
	echo "default -workers (every core); DuckDB with its default threads (every core)."
	echo
	echo "| input | tool | records | wall s | MB/s | MB/s per core | cores used | peak RSS MiB (max) | peak RSS MiB (median) |"
	echo "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
	printf '%s\n' "${main_rows[@]}"
	echo
	echo "ingest's wall time over DuckDB's, pair by pair, and the median (below 1: ingest is faster):"
	echo
	echo "| input | median ratio | per pair |"
	echo "| --- | ---: | --- |"
	printf '%s\n' "${ratio_rows[@]}"
	[[ -z $har_note ]] || { echo; echo "HAR: $har_note."; }
	if [[ -n $workers_ratio ]]; then
		echo
		echo "## -workers 1 against -workers 2 ($first log)"
		echo
		echo "| -workers | wall s | MB/s | cores used |"
		echo "| ---: | ---: | ---: | ---: |"
		printf '%s\n' "${workers_rows[@]}"
		echo
		echo "Speed-up (wall at 1 over wall at 2), median of pairs: $(calc %.2f "$workers_ratio") (per pair: $workers_pairs)."
	fi
	if [[ $memory_runs != 0 ]]; then
		echo
		echo "## Memory shapes"
		echo
		echo "| shape | log MiB | wall s | bound MiB | ingest peak RSS MiB |"
		echo "| --- | ---: | ---: | ---: | ---: |"
		printf '%s\n' "${mem_rows[@]}"
	fi
	echo
	echo "## Targets (issue 11)"
	echo
	echo "| target | measured | result |"
	echo "| --- | --- | --- |"
	printf '%s\n' "${targets[@]}"
} >"$work/RESULTS.md"
cp "$work/RESULTS.md" "$results"
cat "$results"
echo >&2
echo "run.sh: wrote $results" >&2
