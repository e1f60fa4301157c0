#!/usr/bin/env bash
# Speed of `canonurl mine` on about a million distinct URLs (issue 15, section
# 3: "mining 1 M distinct URLs takes <= 10 s on one core with <= 256 MiB peak
# RSS"), on two shapes of log made by data/gen-dust-site.py (every DUST family
# and trap, 14 days, no held-out pages):
#
#   deep  one set of sites at --scale 186 (seed 7): 2,306,618 lines, 531 MB,
#         1,004,899 (host, URL) after the aggressive profile, 13 hosts, the
#         largest with 496,750 URLs. At this scale the generator's sizes
#         collide (its page sizes are drawn from fixed ranges), so most size
#         buckets are over the caps: few candidates, few rules.
#   wide  182 copies of the default sites (--scale 1, --requests 20000, seeds
#         1..182), each copy's hosts renamed (`shop.example` ->
#         `shop.example17`, `203.0.113.7` -> `10.17.113.7`): about 1 M (host,
#         URL) over 2,366 hosts of at most a few thousand URLs, with sizes
#         as distinct as in the default site, so every family is proposed and
#         judged (about 2,000 rules accepted).
#
# Each log is summarized once with `canonurl summarize -j 1 --window 1h
# --profile aggressive` (stage 0, timed too; by hour, as `canonurl mine` and
# examples/spark/mine_job.py summarize logs), then the summary is mined with
# `canonurl mine --summaries -j 1`, with the default --memory and with
# --memory 256MiB (the issue's budget). Last, `canonurl mine -j 1 LOG`: both
# stages in one command, as a user runs it on a log (the issue's measure).
# Mining itself runs on one thread whatever -j says.
#
# usage: benches/mine-speed.sh [deep|wide]...     (default: both)
#
# environment:
#   CANONURL_MINE_DIR    where the logs and summaries are kept (default
#                        target/mine-speed); made once and reused (python3
#                        takes one to two minutes and up to 1.8 GB for each)
#   CANONURL_MINE_RUNS   runs per mining command, the best wall time is kept
#                        (default 3); the peak RSS is the largest of the runs
#   CARGO_TARGET_DIR     respected, as by cargo
#
# Wall time, user+system CPU time and peak RSS come from GNU time
# (/usr/bin/time -f '%e %U %S %M'). The machine may be shared: the load
# average is printed before and after, and the CPU time is the figure that
# noise from other processes inflates least. Nothing here fails on a time: the
# goals are reported as met or not.
set -euo pipefail
cd "$(dirname "$0")/.."

dir="${CANONURL_MINE_DIR:-target/mine-speed}"
runs="${CANONURL_MINE_RUNS:-3}"
target="${CARGO_TARGET_DIR:-target}"

case "$runs" in
    '' | *[!0-9]* | 0) echo "mine-speed.sh: CANONURL_MINE_RUNS must be a positive integer" >&2; exit 2 ;;
esac
if [ ! -x /usr/bin/time ]; then
    echo "mine-speed.sh: needs GNU time at /usr/bin/time (apt-get install time)" >&2
    exit 2
fi

cargo build --release --bin canonurl
canonurl="$target/release/canonurl"

mkdir -p "$dir"
# generate SHAPE LOG: writes the shape's log (into LOG.tmp first: an
# interrupted run must not leave a short log that later runs would take for
# the whole one).
generate() {
    local shape="$1" log="$2" k copy
    echo "generating $log ($shape)..." >&2
    case "$shape" in
        deep)
            python3 data/gen-dust-site.py --seed 7 --days 14 --holdout 0 --scale 186 \
                --log "$log.tmp" --truth /dev/null
            ;;
        wide)
            copy="$(mktemp)"
            : > "$log.tmp"
            for k in $(seq 1 182); do
                python3 data/gen-dust-site.py --seed "$k" --days 14 --holdout 0 --requests 20000 \
                    --log "$copy" --truth /dev/null 2> /dev/null
                sed -e "s/^\([^ :]*\)\.example:/\1.example$k:/" -e "s/^203\.0\.113\.7:/10.$k.113.7:/" \
                    "$copy" >> "$log.tmp"
            done
            rm -f "$copy"
            ;;
    esac
    mv "$log.tmp" "$log"
}

# timed OUT_VAR CMD...: runs CMD under GNU time; sets OUT_VAR to
# "wall user+sys rss_kib". Exits the script when CMD fails.
timed() {
    local var="$1" stats status=0
    shift
    stats="$(mktemp)"
    /usr/bin/time -o "$stats" -f '%e %U %S %M' "$@" > /dev/null 2> "$dir/stderr" || status=$?
    if [ "$status" -ne 0 ]; then
        echo "mine-speed.sh: '$*' failed with status $status; its stderr ends with:" >&2
        tail -n 5 "$dir/stderr" >&2
        exit 1
    fi
    printf -v "$var" '%s' "$(awk '{ printf "%s %.2f %s", $1, $2 + $3, $4 }' "$stats")"
    rm -f "$stats"
}

# best_of LABEL OUT_RULES ARGS...: mines the summary $runs times; prints a
# table row with the best wall time, its CPU time and the largest peak RSS.
best_of() {
    local label="$1" rules="$2" best="" cpu="" rss=0 wall user kib r
    shift 2
    for _ in $(seq "$runs"); do
        timed r "$canonurl" mine --summaries -j 1 "$@" -o "$rules" "$summary"
        read -r wall user kib <<< "$r"
        if [ -z "$best" ] || awk -v a="$wall" -v b="$best" 'BEGIN { exit !(a < b) }'; then
            best="$wall" cpu="$user"
        fi
        [ "$kib" -gt "$rss" ] && rss="$kib"
    done
    awk -v l="$label" -v w="$best" -v c="$cpu" -v k="$rss" -v u="$urls" 'BEGIN {
        m = k / 1024
        printf "%-28s %8.2f %8.2f %9.0f   %s\n", l, w, c, m,
            (w <= 10 && m <= 256 ? "met" : "not met") (u < 1000000 ? " (fewer than 1 M URLs)" : "")
    }'
}

shapes=("$@")
[ "${#shapes[@]}" -gt 0 ] || shapes=(deep wide)
for shape in "${shapes[@]}"; do
    case "$shape" in
        deep | wide) ;;
        *) echo "mine-speed.sh: unknown shape '$shape' (deep or wide)" >&2; exit 2 ;;
    esac
done

echo "date: $(date -u '+%Y-%m-%d %H:%M UTC'); $(nproc) CPUs"
for shape in "${shapes[@]}"; do
    log="$dir/$shape.log"
    summary="$dir/$shape.summary.tsv"
    [ -f "$log" ] || generate "$shape" "$log"
    echo
    echo "== $shape: $log, $(wc -l < "$log") lines, $(wc -c < "$log") bytes"
    echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
    cat "$log" > /dev/null
    timed summarize "$canonurl" summarize -j 1 --window 1h --profile aggressive -o "$summary" "$log"
    rows="$(($(wc -l < "$summary") - 1))"
    urls="$(tail -n +2 "$summary" | cut -f 1,2 | uniq | wc -l)"
    hosts="$(tail -n +2 "$summary" | cut -f 1 | uniq | wc -l)"
    echo "summary: $rows rows, $urls distinct URLs (host, canonical URL under aggressive), $hosts hosts"
    read -r s_wall s_cpu s_kib <<< "$summarize"
    printf '%-28s %8s %8s %9s   %s\n' step "wall s" "cpu s" "RSS MiB" "goal (<= 10 s, <= 256 MiB)"
    awk -v w="$s_wall" -v c="$s_cpu" -v k="$s_kib" 'BEGIN {
        printf "%-28s %8.2f %8.2f %9.0f   %s\n", "summarize -j 1 (stage 0)", w, c, k / 1024, "(no goal of its own)" }'
    best_of "mine (default --memory)" "$dir/$shape.toml"
    best_of "mine --memory 256MiB" "$dir/$shape-256.toml" --memory 256MiB
    timed whole "$canonurl" mine -j 1 -o "$dir/$shape-log.toml" "$log"
    read -r m_wall m_cpu m_kib <<< "$whole"
    awk -v w="$m_wall" -v c="$m_cpu" -v k="$m_kib" 'BEGIN { m = k / 1024
        printf "%-28s %8.2f %8.2f %9.0f   %s\n", "mine -j 1 LOG (both stages)", w, c, m,
            (c <= 10 && m <= 256 ? "met (CPU s)" : "not met (CPU s)") }'
    echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
    # The budget must not change what is learned.
    if ! cmp -s "$dir/$shape.toml" "$dir/$shape-256.toml"; then
        echo "mine-speed.sh: $shape: the rules mined with --memory 256MiB differ from the default's" >&2
        exit 1
    fi
    if ! cmp -s "$dir/$shape.toml" "$dir/$shape-log.toml"; then
        echo "mine-speed.sh: $shape: the rules mined from the log differ from those mined from its summary" >&2
        exit 1
    fi
    echo "rules: $(grep -c '^ *# m-' "$dir/$shape.toml" || true) written ($dir/$shape.toml), the same under both budgets and from the log"
done
