#!/usr/bin/env bash
# Runs netweft's PTF suites (the .py files beside this script) against a P4Runtime
# switch on veth pairs in a fresh network namespace (needs root), one suite per program.
#
#   p4/ptf/run.sh [--target netweft|bmv2] [--out DIR] [PROGRAM ...]
#
#   --target netweft  netweft-p4c compiles, netweft-switch serves (default)
#   --target bmv2     p4c-bm2-ss compiles, simple_switch_grpc serves (both on PATH)
#   --out DIR         compiled programs, switch log, PTF logs and outputs (default: a new temp dir)
#   PROGRAM           basic_forward ecmp_spray fabric aggregation fabric_aggregation (default: all),
#                     or PROGRAM.TestName for one test (fabric.TrimTest)
#
# Switch port N is veth(2N) and PTF's port N is veth(2N+1), as in BMv2's veth_setup.sh.
# The exit status is PTF's: 0 when every test of every suite passed.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
P4DIR=$(dirname "$HERE")
TARGET=netweft
OUT=""
PROGRAMS=()
while [ $# -gt 0 ]; do
    case "$1" in
        --target) TARGET=$2; shift 2 ;;
        --out) OUT=$2; shift 2 ;;
        -h|--help) sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
        -*) echo "run.sh: unknown option $1" >&2; exit 2 ;;
        *) PROGRAMS+=("$1"); shift ;;
    esac
done
[ ${#PROGRAMS[@]} -gt 0 ] || PROGRAMS=(basic_forward ecmp_spray fabric aggregation fabric_aggregation)
case "$TARGET" in
    netweft) COMPILER=netweft-p4c; SWITCH=netweft-switch; SWITCH_OPTS=() ;;
    bmv2) COMPILER=p4c-bm2-ss; SWITCH=simple_switch_grpc; SWITCH_OPTS=(--notifications-addr) ;;
    *) echo "run.sh: --target is netweft or bmv2, not $TARGET" >&2; exit 2 ;;
esac
for tool in "$COMPILER" "$SWITCH" ptf ip; do
    command -v "$tool" >/dev/null || { echo "run.sh: $tool not on PATH" >&2; exit 2; }
done
[ -n "$OUT" ] || OUT=$(mktemp -d "${TMPDIR:-/tmp}/netweft-ptf.XXXXXX")
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
NS=${NETWEFT_PTF_NETNS:-nwptf$$}
# BMv2's nanomsg socket is a file in /tmp, shared across namespaces: one per run
[ ${#SWITCH_OPTS[@]} -eq 0 ] || SWITCH_OPTS+=("ipc:///tmp/$NS-notifications.ipc")
PORTS=4
GRPC=127.0.0.1:9559

for spec in "${PROGRAMS[@]}"; do
    prog=${spec%%.*}
    [ -f "$HERE/$prog.py" ] || { echo "run.sh: no suite $HERE/$prog.py" >&2; exit 2; }
    case " ${COMPILED:-} " in *" $prog "*) continue ;; esac
    COMPILED="${COMPILED:-} $prog"
    echo "run.sh: compiling $prog with $COMPILER"
    "$COMPILER" --p4v 16 -I "$P4DIR" --p4runtime-files "$OUT/$prog.p4info.txtpb" \
        -o "$OUT/$prog.json" "$P4DIR/$prog.p4"
done

SWITCH_PID=""
cleanup() {
    if [ -n "$SWITCH_PID" ]; then kill "$SWITCH_PID" 2>/dev/null || true; wait "$SWITCH_PID" 2>/dev/null || true; fi
    ip netns del "$NS" 2>/dev/null || true
}
trap cleanup EXIT INT TERM

ip netns add "$NS"
in_ns() { ip netns exec "$NS" "$@"; }
in_ns ip link set lo up
in_ns sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1
SWITCH_IFS=()
PTF_IFS=()
for ((p = 0; p < PORTS; p++)); do
    in_ns ip link add "veth$((2 * p))" type veth peer name "veth$((2 * p + 1))"
    in_ns ip link set "veth$((2 * p))" up
    in_ns ip link set "veth$((2 * p + 1))" up
    SWITCH_IFS+=(-i "$p@veth$((2 * p))")
    PTF_IFS+=(--interface "$p@veth$((2 * p + 1))")
done

# Eight priority queues, as the programs' priorities need (fabric.p4 sends trimmed
# headers at a configured priority; with fewer queues simple_switch drops them).
echo "run.sh: starting $SWITCH in namespace $NS (log $OUT/switch.log)"
# not through in_ns: a function in the background is a subshell, and killing it would
# leave the switch running
ip netns exec "$NS" "$SWITCH" "${SWITCH_IFS[@]}" "${SWITCH_OPTS[@]}" --no-p4 --device-id 0 \
    -- --grpc-server-addr "$GRPC" --priority-queues 8 \
    > "$OUT/switch.log" 2>&1 &
SWITCH_PID=$!
for ((t = 0; t < 600; t++)); do
    in_ns bash -c "exec 3<>/dev/tcp/${GRPC%:*}/${GRPC#*:}" 2>/dev/null && break
    kill -0 "$SWITCH_PID" 2>/dev/null || { echo "run.sh: $SWITCH exited:" >&2; tail -20 "$OUT/switch.log" >&2; exit 1; }
    sleep 0.2
done

STATUS=0
for spec in "${PROGRAMS[@]}"; do
    prog=${spec%%.*}
    echo "run.sh: suite $spec"
    in_ns ptf --test-dir "$HERE" "${PTF_IFS[@]}" \
        --test-params="p4info='$OUT/$prog.p4info.txtpb';config='$OUT/$prog.json';grpcaddr='$GRPC'" \
        --default-negative-timeout 0.2 --default-timeout 5 \
        --log-file "$OUT/ptf-$spec.log" "$spec" 2>&1 | tee "$OUT/ptf-$spec.out" \
        || STATUS=1
done
echo "run.sh: results in $OUT"
exit $STATUS
