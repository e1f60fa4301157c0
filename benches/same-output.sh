#!/usr/bin/env bash
# Checks that two canonurl binaries write the same bytes: for a change that
# should move only speed (the dedup rules fused with the fast path, issue 13
# §2), run with the binary before the change and the one after it.
#
# Compared (stdout's MD5 and the exit status; stderr is not compared, it
# holds timings):
#   every url-dataset list, `-f plain`, each profile (whatwg, rfc3986, safe,
#       aggressive);
#   every shared log (logs-*/ and extra-logs/, format detected), whose
#       request targets are written path-only, each profile;
#   both again with `aggressive` and the two rules files of tests/alloc.rs:
#       LISTS_FILE, lists and settings that keep one configuration for
#       every URL (the rules then run fused with the fast path), and
#       RULES_FILE, every kind of key (host and path sections, aliases,
#       rewrites), on the url lists with the opt-in rules on too.
#
# usage: benches/same-output.sh BEFORE AFTER
#   BEFORE, AFTER  canonurl binaries (e.g. a copy of target/release/canonurl
#                  built before the change, and the one built after)
# environment: CANONURL_SHARED_DATA (default ../shared/data).
set -euo pipefail
cd "$(dirname "$0")/.."
[ $# -eq 2 ] || { sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 2; }
before="$1"
after="$2"
data="${CANONURL_SHARED_DATA:-../shared/data}"
[ -d "$data/url-dataset" ] || { echo "same-output.sh: $data/url-dataset not found" >&2; exit 2; }

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

# const NAME: the rules file that tests/alloc.rs holds in the constant NAME.
const() {
    sed -n "/^const $1: &str = r#\"\$/,/^\"#;\$/p" tests/alloc.rs | sed '1d; $d'
}
const LISTS_FILE >"$tmp/lists.toml"
const RULES_FILE >"$tmp/all.toml"
grep -q '^drop-params' "$tmp/lists.toml" && grep -q '^\[\[host\]\]' "$tmp/all.toml" || {
    echo "same-output.sh: LISTS_FILE or RULES_FILE not found in tests/alloc.rs" >&2
    exit 2
}

# digest BIN ARGS...: stdout's MD5 and the exit status.
digest() {
    local bin="$1"
    shift
    local status=0
    "$bin" "$@" >"$tmp/out" 2>/dev/null || status=$?
    echo "$(md5sum <"$tmp/out" | cut -c1-32) exit=$status"
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

lists=("$data"/url-dataset/*.txt)
logs=()
for f in "$data"/logs-*/* "$data"/extra-logs/*; do
    [ -f "$f" ] && logs+=("$f")
done
for f in "${lists[@]}"; do
    for p in whatwg rfc3986 safe aggressive; do
        compare "$p $(basename "$f")" -j 1 -f plain --profile "$p" "$f"
    done
    compare "aggressive+lists $(basename "$f")" -j 1 -f plain --profile aggressive --rules "$tmp/lists.toml" "$f"
    compare "aggressive+all $(basename "$f")" -j 1 -f plain --profile aggressive --rules "$tmp/all.toml" \
        --rule +lowercase-path,+https-as-http,sort-query=key-value "$f"
done
for f in "${logs[@]}"; do
    for p in whatwg rfc3986 safe aggressive; do
        compare "$p $(basename "$f")" -j 1 --profile "$p" "$f"
    done
    compare "aggressive+lists $(basename "$f")" -j 1 --profile aggressive --rules "$tmp/lists.toml" "$f"
    compare "aggressive+all $(basename "$f")" -j 1 --profile aggressive --rules "$tmp/all.toml" "$f"
done
echo "same-output.sh: $runs runs (${#lists[@]} lists, ${#logs[@]} logs), $differ different"
[ "$differ" -eq 0 ]
