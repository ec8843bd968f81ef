#!/usr/bin/env bash
# A single-node Ceph RADOS Gateway (Debian's Ceph 16.2) for the tests and the bench, all under one directory.
#
#   scripts/rgw.sh start DIR [BUCKET...]   installs what is missing, starts one ceph-mon, one bluestore ceph-osd
#                                          (a sparse file in DIR) and radosgw on 127.0.0.1, makes an S3 user and the
#                                          buckets, and prints one line of JSON: endpoint, keys, the daemons' pids
#   scripts/rgw.sh stop DIR                stops every daemon by the pid it recorded, then removes DIR
#
# Idempotent: `start` on a DIR whose daemons answer prints the same line again. No ceph-mgr (nothing here needs it);
# `paxos_propose_interval = 0.05` (a single mon otherwise commits each of radosgw's pool creations about once a
# second: 23 s to the first request instead of 6). Bluestore, never memstore (memstore keeps deleted objects in
# memory). Ports: the mon's and radosgw's are free ports picked here, the OSD's from Ceph's range, all on loopback.
# RGW_LISTEN=ADDRESS:PORT adds a radosgw endpoint (the bench runs the script in a link lab's server namespace, under
# `ip netns exec`, with the lab's server address, so that clients on the lab's far side reach it).
set -euo pipefail

usage() {
    echo "usage: scripts/rgw.sh start DIR [BUCKET...] | stop DIR" >&2
    exit 2
}
[ $# -ge 2 ] || usage
command=$1
dir=$2
shift 2
case "$dir" in /*) ;; *) dir="$PWD/$dir" ;; esac

access_key=aether-rgw-test
secret_key=aether-rgw-test-secret
conf="$dir/ceph.conf"
empty_sha256=e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855

# A free TCP port on 127.0.0.1 (bound and released; the daemon binds it a moment later).
free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

pid_alive() { [ -f "$1" ] && kill -0 "$(cat "$1")" 2>/dev/null; }

stop() {
    [ -d "$dir" ] || return 0
    local pids=()
    for name in rgw osd mon; do
        local file="$dir/run/$name.pid"
        if pid_alive "$file"; then
            local pid
            pid=$(cat "$file")
            kill -TERM "$pid" 2>/dev/null || true
            pids+=("$pid")
        fi
    done
    # A few seconds for a clean exit, then SIGKILL: the data is removed next anyway.
    for pid in "${pids[@]}"; do
        for _ in $(seq 1 30); do
            kill -0 "$pid" 2>/dev/null || break
            sleep 0.1
        done
        kill -KILL "$pid" 2>/dev/null || true
    done
    rm -rf "$dir"
}

announce() {
    printf '{"endpoint":"http://127.0.0.1:%s","accessKey":"%s","secretKey":"%s","region":"us-east-1",' \
        "$(cat "$dir/rgw.port")" "$access_key" "$secret_key"
    printf '"pids":{"mon":%s,"osd":%s,"rgw":%s},"directory":"%s"}\n' \
        "$(cat "$dir/run/mon.pid")" "$(cat "$dir/run/osd.pid")" "$(cat "$dir/run/rgw.pid")" "$dir"
}

# Waits up to $2 tenths of a second for command $1 to succeed.
wait_for() {
    local tries=$2
    until eval "$1" >/dev/null 2>&1; do
        tries=$((tries - 1))
        if [ "$tries" -le 0 ]; then return 1; fi
        sleep 0.1
    done
}

# Reports a failed start with the end of each log, then stops whatever was started and removes DIR.
fail() {
    echo "rgw.sh: $1" >&2
    tail -n 5 "$dir"/log/*.log "$dir"/log/*.out >&2 2>/dev/null || true
    stop
    exit 1
}

# Runs a daemon in the foreground, detached from this script's descriptors, and records its pid.
daemon() {
    local name=$1
    shift
    setsid "$@" -f -c "$conf" </dev/null >"$dir/log/$name.out" 2>&1 &
    echo $! >"$dir/run/$name.pid"
}

create_buckets() {
    local port
    port=$(cat "$dir/rgw.port")
    for bucket in "$@"; do
        # 200 creates it; 409 BucketAlreadyOwnedByYou / BucketAlreadyExists means it is there.
        local status
        # curl signs with SigV4 but leaves out the payload hash S3 needs: that of the empty body.
        status=$(curl -s -o /dev/null -w '%{http_code}' -X PUT --aws-sigv4 "aws:amz:us-east-1:s3" \
            -H "x-amz-content-sha256: $empty_sha256" -u "$access_key:$secret_key" "http://127.0.0.1:$port/$bucket")
        case "$status" in 200 | 409) ;; *) fail "creating bucket $bucket answered HTTP $status" ;; esac
    done
}

start() {
    # One dpkg-query for the four Ceph packages; the whole list only when one is missing.
    if [ "$(dpkg-query -W -f='${Status}\n' ceph-mon ceph-osd radosgw ceph-common 2>/dev/null |
        grep -c 'install ok installed')" -ne 4 ]; then
        "$(dirname "$0")/install-deps.sh" >&2
    fi
    if pid_alive "$dir/run/mon.pid" && pid_alive "$dir/run/osd.pid" && pid_alive "$dir/run/rgw.pid"; then
        create_buckets "$@"
        announce
        return 0
    fi
    [ ! -e "$dir" ] || [ -z "$(ls -A "$dir")" ] || stop
    mkdir -p "$dir/run" "$dir/log" "$dir/mon" "$dir/osd/ceph-0" "$dir/rgw"
    local fsid mon_port rgw_port osd_uuid
    fsid=$(cat /proc/sys/kernel/random/uuid)
    osd_uuid=$(cat /proc/sys/kernel/random/uuid)
    mon_port=$(free_port)
    rgw_port=$(free_port)
    echo "$rgw_port" >"$dir/rgw.port"
    cat >"$conf" <<EOF
[global]
fsid = $fsid
mon host = v2:127.0.0.1:$mon_port
public addr = 127.0.0.1
ms bind msgr1 = false
ms bind msgr2 = true
run dir = $dir/run
admin socket = $dir/run/\$name.asok
log file = $dir/log/\$name.log
log to stderr = false
err to stderr = false
keyring = $dir/keyring
osd pool default size = 1
osd pool default min size = 1
osd pool default pg num = 8
osd pool default pgp num = 8
osd pool default pg autoscale mode = off
osd crush chooseleaf type = 0
mon allow pool size one = true
mon warn on pool no redundancy = false
mon max pg per osd = 1000
paxos propose interval = 0.05
[mon]
mon data = $dir/mon/ceph-\$id
[osd]
osd data = $dir/osd/ceph-\$id
osd objectstore = bluestore
bluestore block path = $dir/osd/ceph-\$id/block.file
bluestore block create = true
bluestore block size = 64424509440
bluestore fsck on mkfs = false
bluestore fsck on mount = false
osd memory target = 1073741824
[client]
rgw frontends = beast endpoint=127.0.0.1:$rgw_port${RGW_LISTEN:+ endpoint=$RGW_LISTEN}
rgw data = $dir/rgw
rgw gc obj min wait = 10
rgw gc processor period = 10
rgw enable usage log = false
EOF
    # cephx, as every Ceph runs (radosgw 16.2 cannot reach a mon with auth none): one keyring for every daemon.
    # The keys in one Python call (a ceph-authtool start per key costs about a second on a busy machine): Ceph's
    # CryptoKey encoding, base64 of type 1 (AES) u16, created u32 seconds + u32 nanoseconds, length u16, 16 bytes.
    local keyring="$dir/keyring" osd_key
    python3 - "$keyring" <<'PYTHON'
import base64, os, struct, sys, time
def key():
    return base64.b64encode(struct.pack("<HIIH", 1, int(time.time()), 0, 16) + os.urandom(16)).decode()
entities = [
    ("mon.", {"mon": "allow *"}),
    ("client.admin", {"mon": "allow *", "osd": "allow *", "mgr": "allow *"}),
    ("client.rgw", {"mon": "allow rw", "osd": "allow rwx"}),
]
with open(sys.argv[1], "w") as f:
    for name, caps in entities:
        f.write(f"[{name}]\n\tkey = {key()}\n")
        for service, cap in caps.items():
            f.write(f'\tcaps {service} = "{cap}"\n')
    f.write(f"# osd {key()}\n")
PYTHON
    osd_key=$(sed -n 's/^# osd //p' "$keyring")
    monmaptool --create --fsid "$fsid" --addv a "[v2:127.0.0.1:$mon_port]" "$dir/monmap" >/dev/null
    ceph-mon -c "$conf" --mkfs -i a --monmap "$dir/monmap" --keyring "$dir/keyring" \
        >"$dir/log/mon-mkfs.out" 2>&1 || fail "ceph-mon --mkfs failed"
    daemon mon ceph-mon -i a
    # No polling of the mon: the ceph command (a slow Python start per call) waits for it to answer.
    local id
    id=$(printf '{"cephx_secret": "%s"}' "$osd_key" |
        ceph -c "$conf" --connect-timeout 60 osd new "$osd_uuid" -i -) || fail "ceph osd new failed"
    printf '[osd.%s]\n\tkey = %s\n' "$id" "$osd_key" >>"$keyring"
    ceph-osd -c "$conf" -i "$id" --mkfs --osd-uuid "$osd_uuid" >"$dir/log/osd-mkfs.out" 2>&1 ||
        fail "ceph-osd --mkfs failed"
    daemon osd ceph-osd -i "$id"
    # The OSD's own log says when the mon has marked it up (cheaper than asking the mon).
    wait_for "grep -q 'state: booting -> active' '$dir/log/osd.$id.log'" 600 || fail "ceph-osd did not come up"
    daemon rgw radosgw -n client.rgw
    wait_for "curl -sf -o /dev/null http://127.0.0.1:$rgw_port/" 600 || fail "radosgw did not answer"
    radosgw-admin -c "$conf" user create --uid=aether --display-name=aether --access-key="$access_key" \
        --secret-key="$secret_key" >"$dir/log/user.out" 2>&1 || fail "radosgw-admin user create failed"
    create_buckets "$@"
    announce
}

case "$command" in
    start) start "$@" ;;
    stop) stop ;;
    *) usage ;;
esac
