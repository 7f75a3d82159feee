#!/usr/bin/env bash
# Two "hosts" on one machine (issue 8's --nnodes 2 check): two network namespaces joined by a
# veth pair (10.77.<n>.1 and .2), one ember-run per namespace with --nnodes 2 --node-rank 0|1
# --master-addr 10.77.<n>.1, one worker each (world size 2), running docs/data_parallelism.md's
# DistributedDataParallel example over gloo between them (GLOO_SOCKET_IFNAME names the veth,
# as with PyTorch on a multi-homed host). Both workers must finish with the same weights.
# Needs root and `ip` (iproute2) for the namespaces: skips (exit 77) without them.
# Usage: two_hosts_netns.sh <ember-run> <ddp_demo>.
set -euo pipefail
launcher=$1 demo=$2
skip() { echo "skipping: $*"; exit 77; }
[ "$(id -u)" -eq 0 ] || skip "network namespaces need root"
command -v ip > /dev/null || skip "no ip (iproute2)"

tag=e$$ net=$(( $$ % 200 + 20 ))
ns0=${tag}h0 ns1=${tag}h1 v0=${tag}v0 v1=${tag}v1 addr0=10.77.$net.1 addr1=10.77.$net.2
tmp=$(mktemp -d)
cleanup() {
  ip netns del "$ns0" 2> /dev/null || true  # deleting a namespace removes its end of the veth
  ip netns del "$ns1" 2> /dev/null || true
  rm -rf "$tmp"
}
trap cleanup EXIT
ip netns add "$ns0" 2> /dev/null || skip "cannot create network namespaces here"
ip netns add "$ns1"
ip link add "$v0" type veth peer name "$v1" || skip "cannot create a veth pair here"
ip link set "$v0" netns "$ns0"
ip link set "$v1" netns "$ns1"
ip -n "$ns0" addr add "$addr0/24" dev "$v0"
ip -n "$ns1" addr add "$addr1/24" dev "$v1"
for ns in "$ns0" "$ns1"; do ip -n "$ns" link set lo up; done
ip -n "$ns0" link set "$v0" up
ip -n "$ns1" link set "$v1" up

fail() { echo "FAIL: $*"; cat "$tmp"/node*.log; exit 1; }
node() {  # node <namespace> <veth> <node rank>
  ip netns exec "$1" env GLOO_SOCKET_IFNAME="$2" timeout 120 "$launcher" --nnodes 2 --node-rank "$3" \
    --nproc-per-node 1 --master-addr "$addr0" --master-port 29611 "$demo" > "$tmp/node$3.log" 2>&1
}
node "$ns0" "$v0" 0 & pid0=$!
node "$ns1" "$v1" 1 & pid1=$!
rc0=0 rc1=0
wait "$pid0" || rc0=$?
wait "$pid1" || rc1=$?
cat "$tmp/node0.log" "$tmp/node1.log"
[ "$rc0" -eq 0 ] && [ "$rc1" -eq 0 ] || fail "node exit codes $rc0 and $rc1"
grep -q '^\[default0\]:rank 0: ' "$tmp/node0.log" || fail "node 0 did not run global rank 0"
grep -q '^\[default0\]:rank 1: ' "$tmp/node1.log" || fail "node 1 did not run global rank 1"
sums=$(cat "$tmp/node0.log" "$tmp/node1.log" | sed -n 's/.*weights checksum \([^ ]*\)$/\1/p' | sort -u)
[ "$(wc -l <<< "$sums")" -eq 1 ] || fail "the two hosts ended with different weights: $sums"
echo "two_hosts_netns: ranks 0 and 1 on two network namespaces over $v0/$v1 agree (checksum $sums)"
