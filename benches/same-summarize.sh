#!/usr/bin/env bash
# Checks that two canonurl binaries summarize the same: for a change to
# `canonurl summarize` that should move only speed or memory, run with the
# binary before the change and the one after it.
#
# Compared, per log and option set, for `canonurl summarize -o OUT OPTIONS
# LOG`: the summary's bytes and the exit status (stderr holds timings and
# is not compared). Option sets: -j 1; -j 2; -j 2 --memory 24MiB;
# --window 30m --profile aggressive; --window none --profile whatwg.
#
# usage: benches/same-summarize.sh BEFORE AFTER [LOG...]
#   BEFORE, AFTER  canonurl binaries
#   LOG...         the logs (default: every shared log: logs-*/, nasa-tsv/
#                  and extra-logs/, SOURCES.md files left out)
# environment:
#   CANONURL_SHARED_DATA  default ../shared/data
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -ge 2 ] || { sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 2; }
before="$1"
after="$2"
shift 2
data="${CANONURL_SHARED_DATA:-../shared/data}"
logs=("$@")
if [ ${#logs[@]} -eq 0 ]; then
    [ -d "$data/nasa-tsv" ] || { echo "same-summarize.sh: $data/nasa-tsv not found" >&2; exit 2; }
    while IFS= read -r f; do logs+=("$f"); done < <(
        find "$data"/logs-* "$data/nasa-tsv" "$data/extra-logs" -type f ! -name SOURCES.md | sort
    )
fi
sets=("-j 1" "-j 2" "-j 2 --memory 24MiB" "--window 30m --profile aggressive"
    "--window none --profile whatwg")
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
# run BIN OUT OPTIONS LOG: the summary's MD5 and the exit status.
run() {
    local status=0 opts
    read -r -a opts <<<"$3"
    "$1" summarize -o "$2" "${opts[@]}" "$4" 2>/dev/null || status=$?
    echo "$(md5sum <"$2" | cut -d' ' -f1) $status"
}
runs=0
different=0
for log in "${logs[@]}"; do
    for set in "${sets[@]}"; do
        a="$(run "$before" "$tmp/a" "$set" "$log")"
        b="$(run "$after" "$tmp/b" "$set" "$log")"
        runs=$((runs + 1))
        if [ "$a" != "$b" ]; then
            different=$((different + 1))
            echo "DIFFERENT: $log ($set): $a vs $b"
        fi
    done
done
echo "same-summarize.sh: $runs runs (${#logs[@]} logs), $different different"
[ "$different" -eq 0 ]
