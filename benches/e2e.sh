#!/usr/bin/env bash
# End-to-end throughput of the canonurl binary on a synthetic 1 GiB combined
# access log, next to `wc -l` and `cat` on the same file: those two are the
# floor (reading the file and finding its lines), so the table shows how far
# canonurl is from it, with one thread and with one per CPU.
#
# usage: benches/e2e.sh
#
# environment:
#   CANONURL_E2E_DIR   where the log is kept (default target/e2e); it is made
#                      once by examples/gen_access_log.rs and reused
#   CANONURL_E2E_SIZE  log size for the generator (default 1GiB; e.g. 256MiB)
#   CANONURL_E2E_RUNS  runs per command, the best is kept (default 3)
#   CANONURL_E2E_TSV   where the table is also written as tab-separated values
#                      (default $CANONURL_E2E_DIR/results.tsv), for
#                      benches/chart.py
#   CARGO_TARGET_DIR   respected, as by cargo
#
# Each command runs after the page cache was warmed, so the times are CPU and
# memory bandwidth, not the disk. Best of N wall times (date +%s.%N), since
# noise only ever adds time. GB/s is file bytes / seconds with GB = 1e9.
set -euo pipefail
cd "$(dirname "$0")/.."

dir="${CANONURL_E2E_DIR:-target/e2e}"
size="${CANONURL_E2E_SIZE:-1GiB}"
runs="${CANONURL_E2E_RUNS:-3}"
tsv="${CANONURL_E2E_TSV:-$dir/results.tsv}"
target="${CARGO_TARGET_DIR:-target}"
jobs="$(nproc)"

case "$runs" in
    '' | *[!0-9]* | 0) echo "e2e.sh: CANONURL_E2E_RUNS must be a positive integer" >&2; exit 2 ;;
esac

# The default keeps its documented name; other sizes get their own file, so
# that a cached log of another size is never measured by mistake.
if [ "$size" = 1GiB ]; then
    log="$dir/access-1g.log"
else
    log="$dir/access-$size.log"
fi

cargo build --release --bin canonurl --example gen_access_log
canonurl="$target/release/canonurl"
generator="$target/release/examples/gen_access_log"

mkdir -p "$dir"
if [ ! -f "$log" ]; then
    echo "generating $log ($size)..." >&2
    # Into a temporary name first: an interrupted run must not leave a short
    # log that later runs would take for the real one.
    "$generator" --size "$size" --out "$log.tmp"
    mv "$log.tmp" "$log"
fi
bytes="$(wc -c < "$log")"
lines="$(wc -l < "$log")"
cat "$log" > /dev/null

# Diagnostics for rejected lines go here, not to the terminal; writing them is
# part of canonurl's work, so they are not sent to /dev/null either.
diag="$dir/canonurl.stderr"

# best_of LABEL CMD...: runs CMD $runs times (stdout to /dev/null, stderr to
# $diag), prints the best wall time in seconds. Exits the script when CMD fails.
best_of() {
    local label="$1" best="" start end status
    shift
    for _ in $(seq "$runs"); do
        start="$(date +%s.%N)"
        status=0
        "$@" > /dev/null 2> "$diag" || status=$?
        end="$(date +%s.%N)"
        if [ "$status" -ne 0 ]; then
            echo "e2e.sh: '$label' failed with status $status; its stderr ends with:" >&2
            tail -n 5 "$diag" >&2
            exit 1
        fi
        best="$(awk -v s="$start" -v e="$end" -v b="$best" \
            'BEGIN { t = e - s; if (b == "" || t < b) print t; else print b }')"
    done
    echo "$best"
}

# row LABEL SECONDS: one table row, on stdout and (the same figures, raw) in
# $tsv.new: a machine-readable copy, so that a chart never parses markdown.
row() {
    awk -v label="$1" -v t="$2" -v n="$bytes" \
        'BEGIN { printf "| `%s` | %.3f | %.2f |\n", label, t, n / t / 1e9 }'
    awk -v label="$1" -v t="$2" -v n="$bytes" -v l="$lines" \
        'BEGIN { printf "%s\t%.6f\t%d\t%d\t%.4f\t%.0f\n", label, t, n, l, n / t / 1e9, l / t }' >> "$tsv.new"
}

commit="$(git rev-parse --short HEAD 2> /dev/null || echo unknown)"
if [ -n "$(git status --porcelain --untracked-files=no 2> /dev/null)" ]; then
    commit="$commit (with uncommitted changes)"
fi
now="$(date -u +%Y-%m-%dT%H:%M:%SZ)"
cpu="$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo 2> /dev/null | head -n 1)"

echo "## canonurl end to end"
echo
echo "- commit: $commit"
echo "- date: $now"
echo "- cpu: ${cpu:-unknown ($(uname -m))}, nproc $jobs"
echo "- $(rustc -V)"
echo "- input: $log, $bytes bytes, $lines lines; best of $runs runs, page cache warm"
echo

wc_time="$(best_of "wc -l FILE" wc -l "$log")"
cat_time="$(best_of "cat FILE > /dev/null" cat "$log")"
one_time="$(best_of "canonurl -j 1" "$canonurl" -j 1 -o /dev/null "$log")"
diag_lines="$(wc -l < "$diag")"
all_time="$(best_of "canonurl -j $jobs" "$canonurl" -j "$jobs" -o /dev/null "$log")"

# The TSV starts with the run's facts as `# key: value` comments; it is
# written under a temporary name and renamed at the end, so that a failed run
# never leaves a partial table behind for the chart.
mkdir -p "$(dirname "$tsv")"
{
    echo "# canonurl end to end, benches/e2e.sh"
    echo "# commit: $commit"
    echo "# date: $now"
    echo "# cpu: ${cpu:-unknown ($(uname -m))}, nproc $jobs"
    echo "# input: $bytes bytes, $lines lines ($size combined log); best of $runs runs, page cache warm"
    printf 'command\tseconds\tbytes\tlines\tgb_per_s\tlines_per_s\n'
} > "$tsv.new"
echo "| command | best s | GB/s |"
echo "|---|---:|---:|"
row "wc -l FILE" "$wc_time"
row "cat FILE > /dev/null" "$cat_time"
row "canonurl -j 1 -o /dev/null FILE" "$one_time"
row "canonurl -j $jobs -o /dev/null FILE" "$all_time"
echo
awk -v a="$one_time" -v b="$all_time" -v j="$jobs" \
    'BEGIN { printf "-j 1 time / -j %d time: %.2fx\n", j, a / b }'
echo "canonurl stderr: $diag_lines lines (rejected lines) per run, kept in $diag"
mv "$tsv.new" "$tsv"
echo "table also written to $tsv"

# Peak resident memory, from GNU time when it is there (not a timing run).
if [ -x /usr/bin/time ]; then
    for args in "-j 1" "-j $jobs" "-j $jobs --count"; do
        # shellcheck disable=SC2086 # $args is meant to split
        kib="$(/usr/bin/time -f %M "$canonurl" $args -o /dev/null "$log" 2>&1 >/dev/null | tail -n 1)"
        echo "peak RSS, canonurl $args: $((kib / 1024)) MiB"
    done
fi
