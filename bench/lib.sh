# shellcheck shell=bash
# Shared by the bench/ scripts: source it after setting `name` (the
# script's name for messages). It makes sure GNU time is there, creates a
# work directory ($work, removed on exit) and builds ingest and genlog into
# it. Optional, set before sourcing: work_parent, the directory the work
# directory is made in (default ${TMPDIR:-/tmp}); build_duckconv=1 also
# builds bench/duckconv (the DuckDB baseline; cgo, slow to link the first
# time).

if [[ ! -x /usr/bin/time ]]; then
	if [[ $(id -u) -eq 0 ]] && command -v apt-get >/dev/null; then
		echo "$name: /usr/bin/time missing: installing the Debian package time" >&2
		apt-get update -qq && apt-get install -y -qq time >/dev/null
	else
		echo "$name: /usr/bin/time (GNU time) is missing: install the package 'time' (apt-get install time) and run again" >&2
		exit 2
	fi
fi

work=$(mktemp -d "${work_parent:-${TMPDIR:-/tmp}}/mcptrace-${name%.sh}.XXXXXX")
trap 'rm -rf "$work"' EXIT

echo "building ingest and genlog${build_duckconv:+ and duckconv} into $work" >&2
go build -o "$work/ingest" ./cmd/ingest
go build -o "$work/genlog" ./bench/genlog
if [[ -n ${build_duckconv:-} ]]; then
	go build -o "$work/duckconv" ./bench/duckconv
fi
