#!/usr/bin/env bash
# Checks that two canonurl binaries mine the same: for a change to
# `canonurl mine` that should move only speed or memory, run with the
# binary before the change and the one after it.
#
# Compared, per log, for `canonurl mine --stats -o RULES --evidence EVIDENCE
# [CANONURL_MINE_ARGS] LOG`: the rules file, the evidence file, stderr
# (with the statistics; the time and rate of the bytes line blanked) and
# the exit status.
#
# usage: benches/same-mining.sh BEFORE AFTER [LOG...]
#   BEFORE, AFTER  canonurl binaries
#   LOG...         the logs (default: every shared log: logs-*/, nasa-tsv/
#                  and extra-logs/, SOURCES.md files left out)
# environment:
#   CANONURL_SHARED_DATA  default ../shared/data
#   CANONURL_MINE_ARGS    more options for both runs (default "-j 1"),
#                         e.g. "-j 2 --window 30m" or "--memory 24MiB"
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -ge 2 ] || { sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 2; }
before="$1"
after="$2"
shift 2
data="${CANONURL_SHARED_DATA:-../shared/data}"
read -r -a args <<<"${CANONURL_MINE_ARGS:--j 1}"
logs=("$@")
if [ ${#logs[@]} -eq 0 ]; then
    [ -d "$data/nasa-tsv" ] || { echo "same-mining.sh: $data/nasa-tsv not found" >&2; exit 2; }
    while IFS= read -r f; do logs+=("$f"); done < <(
        find "$data"/logs-* "$data/nasa-tsv" "$data/extra-logs" -type f ! -name SOURCES.md | sort
    )
fi
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
# run BIN DIR LOG: the outputs of one mining run in DIR.
run() {
    mkdir -p "$2"
    local status=0
    "$1" mine --stats -o "$2/rules" --evidence "$2/evidence" "${args[@]}" "$3" \
        2>"$2/stderr.raw" >/dev/null || status=$?
    sed -E 's/in [0-9.]+ s, [0-9.]+ [KMGT]?i?B\/s/in - s, - \/s/' "$2/stderr.raw" >"$2/stderr"
    echo "exit=$status" >"$2/status"
}
differ=0
for log in "${logs[@]}"; do
    run "$before" "$tmp/a" "$log"
    run "$after" "$tmp/b" "$log"
    same=yes
    for f in rules evidence stderr status; do
        cmp -s "$tmp/a/$f" "$tmp/b/$f" || { same=no; echo "DIFFER $f: $log"; }
    done
    [ $same = yes ] && echo "same ($(cat "$tmp/a/status"), $(grep -c . "$tmp/a/evidence" || true) candidates): $log"
    [ $same = yes ] || differ=$((differ + 1))
done
echo "same-mining.sh: ${#logs[@]} logs, $differ differ (args: ${args[*]})"
[ $differ -eq 0 ]
