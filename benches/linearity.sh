#!/usr/bin/env bash
# Is klogscan's work linear in each dimension of the data ("doubling any one of
# bytes, batches, partitions, segments, producers and open transactions at most 2.2× the
# time")? For each dimension, write the same shape at N and 2N (examples/synth) and run each
# command with one thread on both; print the ratio of CPU time (perf stat's task-clock: the
# process's own CPU time, which other load on the machine changes far less than wall time)
# and, where the machine exposes hardware counters, of user-space instructions.
#
#   benches/linearity.sh                       # every dimension, scan and verify
#   DIMS="open-txns bytes" CMDS=scan RUNS=5 benches/linearity.sh
#   VALGRIND=1 DIMS=many-producers benches/linearity.sh   # exact instruction counts
#
# Needs: cargo, awk, and perf (`perf stat`; without it GNU time's user+sys seconds, 10 ms
# resolution, are used). Data goes to /tmp/klogscan-lin-<dim>-<n> and is
# reused. Each figure is the smallest of RUNS runs on page-cached data.
set -euo pipefail

RUNS=${RUNS:-3}
CMDS=${CMDS:-scan verify}
DIMS=${DIMS:-bytes small-batches many-producers many-partitions open-txns many-segments}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
TARGET=${CARGO_TARGET_DIR:-$ROOT/target}
BIN=$TARGET/release/klogscan
EX=$TARGET/release/examples

(cd "$ROOT" && cargo build --release --quiet --features testkit --bin klogscan --example synth)

use_perf=1
perf stat -x, -e task-clock true 2>&1 >/dev/null | grep -q '^[0-9]' || use_perf=0
use_ins=$use_perf
perf stat -x, -e instructions:u true 2>&1 >/dev/null | grep -q '^[0-9]' || use_ins=0
# VALGRIND=1: count user-space instructions with cachegrind instead (~40x slower, but
# exact and independent of other load: for VMs without a hardware instruction counter).
# One run is enough (the count does not vary); CPU time is not measured then.
use_vg=0
if [ "${VALGRIND:-0}" = 1 ]; then
    command -v valgrind > /dev/null || { echo "VALGRIND=1 needs valgrind" >&2; exit 2; }
    use_vg=1
    use_ins=1
    RUNS=1
fi

# The N of each dimension (2N is the second point); "bytes" is the synth dir's --size in MiB.
base_count() {
    case $1 in
        bytes) echo 512 ;;
        small-batches) echo 2000000 ;;
        many-producers) echo 500000 ;;
        many-partitions) echo 500 ;;
        open-txns) echo 150000 ;;
        many-segments) echo 5000 ;;
        *) echo "unknown dimension $1" >&2; exit 2 ;;
    esac
}

make_data() { # dim n -> dir
    local dir=/tmp/klogscan-lin-$1-$2
    if [ ! -f "$dir/.synth-done" ]; then
        rm -rf "$dir"
        if [ "$1" = bytes ]; then
            "$EX/synth" --out "$dir" --size "$2MiB" >&2
        else
            "$EX/synth" --out "$dir" --shape "$1" --count "$2" >&2
        fi
        touch "$dir/.synth-done"
    fi
    find "$dir" -name '*.log' -exec cat {} + > /dev/null
    echo "$dir"
}

# Smallest instructions and CPU milliseconds over RUNS runs: "instructions msecs".
measure() {
    local best_i="" best_t=""
    for _ in $(seq "$RUNS"); do
        local i t
        if [ "$use_vg" = 1 ]; then
            i=$( { valgrind --tool=cachegrind --cache-sim=no --cachegrind-out-file=/dev/null \
                "$BIN" "$@" 2>&1 >/dev/null || true; } | awk '/I *refs:/ {gsub(",", "", $NF); print $NF}')
            [ -n "$i" ] || i=0
            t=0
        elif [ "$use_perf" = 1 ]; then
            local out
            local events=task-clock
            [ "$use_ins" = 1 ] && events=instructions:u,task-clock
            out=$( { perf stat -x, -e "$events" "$BIN" "$@" 2>&1 >/dev/null || true; } | grep -E 'instructions|task-clock')
            i=$(echo "$out" | awk -F, '/instructions/ {print $1}')
            [ -n "$i" ] || i=0
            t=$(echo "$out" | awk -F, '/task-clock/ {printf "%.0f", $1}')
        else
            i=0
            t=$( { /usr/bin/time -f '%U %S' "$BIN" "$@" > /dev/null || true; } 2>&1 | tail -1 | awk '{printf "%.0f", ($1 + $2) * 1000}')
        fi
        if [ -z "$best_i" ] || [ "$i" -lt "$best_i" ]; then best_i=$i; fi
        if [ -z "$best_t" ] || [ "$t" -lt "$best_t" ]; then best_t=$t; fi
    done
    echo "$best_i $best_t"
}

echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg); perf task-clock: $use_perf; instructions: $use_ins (valgrind: $use_vg)"
echo
echo "| dimension | command | N → 2N | instructions N / 2N | ratio | CPU ms N / 2N | ratio | ≤ 2.2× |"
echo "|---|---|---|---|---|---|---|---|"
for dim in $DIMS; do
    n=$(base_count "$dim")
    n2=$((n * 2))
    d1=$(make_data "$dim" "$n")
    d2=$(make_data "$dim" "$n2")
    for cmd in $CMDS; do
        read -r i1 t1 < <(measure "$cmd" "$d1" --threads 1 --format json)
        read -r i2 t2 < <(measure "$cmd" "$d2" --threads 1 --format json)
        ri=$(awk -v a="$i1" -v b="$i2" 'BEGIN { if (a > 0) printf "%.2f", b / a; else print "-" }')
        rt=$(awk -v a="$t1" -v b="$t2" 'BEGIN { if (a > 0) printf "%.2f", b / a; else print "-" }')
        key=$ri
        [ "$key" = "-" ] && key=$rt
        ok=$(awk -v r="$key" 'BEGIN { print (r <= 2.2) ? "yes" : "**no**" }')
        echo "| $dim | $cmd | $n → $n2 | $i1 / $i2 | $ri | $t1 / $t2 | $rt | $ok |"
    done
done
echo
echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"
