#!/usr/bin/env bash
# Checks that two canonurl binaries write the same bytes in every output
# mode, where benches/same-output.sh compares the default one only (records,
# plain, -j 1): for a change to how workers hand lines to the output (issue
# 30's one line loop and one sink), run with the binary before the change and
# the one after it.
#
# Compared (stdout's MD5, the --rejects file's MD5, stderr's MD5 with its
# timings taken out, and the exit status), each with -j 1 and -j 2:
#   every shared log (logs-*/ and extra-logs/*/, format detected) and two
#       url-dataset lists (-f plain), in: records (plain, tsv, jsonl with
#       every --with column), --unique, --count (tsv), --pipe (plain, tsv),
#       --field referer, --field both (records, --pipe, --count), --key,
#       --explain, --surt, --dedup-key, --stats, and `canonurl summarize`;
#   the lists and logs-combined/ again with a --max-line-len of 1024, so
#       that long lines are rejected (userbait.txt and the logs have some).
#
# usage: benches/same-modes.sh BEFORE AFTER
#   BEFORE, AFTER  canonurl binaries (e.g. a copy of target/release/canonurl
#                  built before the change, and the one built after)
# environment: CANONURL_SHARED_DATA (default ../shared/data).
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -eq 2 ] || { sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 2; }
before="$1"
after="$2"
data="${CANONURL_SHARED_DATA:-../shared/data}"
[ -d "$data/url-dataset" ] || { echo "same-modes.sh: $data/url-dataset not found" >&2; exit 2; }

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

# digest BIN ARGS...: MD5s of stdout, of --rejects' file and of stderr (its
# timings, which differ from run to run, replaced), and the exit status.
digest() {
    local bin="$1"
    shift
    local status=0
    rm -f "$tmp/rejects"
    "$bin" "$@" >"$tmp/out" 2>"$tmp/err" || status=$?
    [ -f "$tmp/rejects" ] || : >"$tmp/rejects"
    # Times (`1.2 s`, `0.03s`, `12 ms`) and rates (`3.4 MB/s`, `MiB/s`).
    sed -E 's/[0-9]+(\.[0-9]+)? ?(s|ms|µs|us|[KMG]i?B\/s|lines\/s|URLs\/s)\b/T/g' "$tmp/err" >"$tmp/err.t"
    echo "$(md5sum <"$tmp/out" | cut -c1-32)" \
        "$(md5sum <"$tmp/rejects" | cut -c1-32)" \
        "$(md5sum <"$tmp/err.t" | cut -c1-32) exit=$status"
}

runs=0
differ=0
# compare NAME ARGS...
compare() {
    local name="$1"
    shift
    local a b
    a="$(digest "$before" "$@")"
    b="$(digest "$after" "$@")"
    runs=$((runs + 1))
    if [ "$a" != "$b" ]; then
        differ=$((differ + 1))
        echo "DIFFERENT  $name: before $a, after $b"
    fi
}

inputs=()
for f in "$data"/logs-*/* "$data"/extra-logs/*/*; do
    [ -f "$f" ] && [ "$(basename "$f")" != SOURCES.md ] && inputs+=("$f")
done
lists=("$data"/url-dataset/kasztp.txt "$data"/url-dataset/userbait.txt)

# modes: one per line, the arguments of a run (word-split).
modes='
--format plain
--format tsv
--format jsonl --with status,bytes,method,time,client,host,input
--unique
--count --format tsv
--pipe
--pipe --format tsv
--field referer
--field referer --pipe
--field both --format tsv
--field both --pipe
--field both --count --format jsonl
--key
--explain --format tsv
--surt
--dedup-key --key-profile aggressive --format tsv
--stats
'
for j in 1 2; do
    for f in "${inputs[@]}" "${lists[@]}"; do
        fmt=()
        case "$f" in */url-dataset/*) fmt=(-f plain) ;; esac
        while IFS= read -r m; do
            [ -n "$m" ] || continue
            # shellcheck disable=SC2086 # word-split on purpose
            compare "-j $j ${fmt[*]} $m $(basename "$f")" -j "$j" "${fmt[@]}" $m --rejects "$tmp/rejects" "$f"
        done <<<"$modes"
        compare "-j $j summarize $(basename "$f")" summarize -j "$j" "${fmt[@]}" "$f"
    done
    for f in "${lists[@]}" "$data"/logs-combined/*; do
        fmt=()
        case "$f" in */url-dataset/*) fmt=(-f plain) ;; esac
        for m in --format=plain --pipe --unique "--field both --format tsv" "--field both --pipe"; do
            # shellcheck disable=SC2086
            compare "-j $j --max-line-len 1024 ${fmt[*]} $m $(basename "$f")" -j "$j" "${fmt[@]}" $m \
                --max-line-len 1024 --rejects "$tmp/rejects" "$f"
        done
    done
done
echo "same-modes.sh: $runs runs (${#inputs[@]} logs, ${#lists[@]} lists, -j 1 and -j 2), $differ different"
[ "$differ" -eq 0 ]
