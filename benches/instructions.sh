#!/usr/bin/env bash
# Instructions per URL for canonurl (each profile), ada-url and url on the
# url-dataset lists, counted by callgrind: unlike times, these do not depend on
# what else the machine is doing. The harness cost (reading and splitting the
# file, mode `none`) is measured the same way and subtracted.
#
# usage: benches/instructions.sh [DATA_DIR]   (default ../shared/data/url-dataset,
#        or $CANONURL_SHARED_DATA/url-dataset)
set -euo pipefail
cd "$(dirname "$0")/.."
data="${1:-${CANONURL_SHARED_DATA:-../shared/data}/url-dataset}"
if [ ! -d "$data" ]; then
    echo "instructions.sh: $data not found; pass the url-dataset directory" >&2
    exit 2
fi
command -v valgrind >/dev/null || { echo "instructions.sh: valgrind is needed" >&2; exit 2; }
cargo build --release --example peers >/dev/null 2>&1 || cargo build --release --example peers
bin="${CARGO_TARGET_DIR:-target}/release/examples/peers"
count() {
    valgrind --tool=callgrind --callgrind-out-file=/dev/null "$bin" "$1" "$2" 2>&1 |
        sed -n 's/.*refs: *\([0-9,]*\).*/\1/p' | tr -d ,
}
printf '%-14s %8s %9s %9s %9s %9s %10s\n' file urls whatwg rfc3986 ada url ada/whatwg
for f in kasztp node_files userbait isaacs_files; do
    file="$data/$f.txt"
    [ -f "$file" ] || continue
    urls=$("$bin" "$file" none 2>&1 | sed -n 's/^\([0-9]*\) lines.*/\1/p')
    base=$(count "$file" none)
    w=$(( ($(count "$file" whatwg) - base) / urls ))
    r=$(( ($(count "$file" rfc3986) - base) / urls ))
    a=$(( ($(count "$file" ada) - base) / urls ))
    u=$(( ($(count "$file" url) - base) / urls ))
    printf '%-14s %8d %9d %9d %9d %9d %9s\n' "$f" "$urls" "$w" "$r" "$a" "$u" \
        "$(awk -v a="$a" -v w="$w" 'BEGIN { printf "%.1fx", a / w }')"
done
