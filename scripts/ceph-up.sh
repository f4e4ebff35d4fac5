#!/usr/bin/env bash
# Starts a single-node Ceph (one monitor, one OSD on memstore) with its RADOS Gateway (S3)
# on loopback, for Shoal's data tests and benchmarks. No systemd, containers or disks.
#
# Usage: scripts/ceph-up.sh          (idempotent: a running, healthy gateway is kept)
# Env:   SHOAL_CEPH_DIR  state, logs and pid files (default /var/tmp/shoal-ceph)
#        SHOAL_RGW_PORT  the S3 port (default 17480); SHOAL_MON_PORT (default 16789)
#        INSTALL=1       apt-get install the packages first (scripts/install-deps.sh has them)
# Prints the endpoint and credentials and writes them to $SHOAL_CEPH_DIR/s3.env, as
# AWS_ENDPOINT_URL, AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and AWS_REGION lines that a
# shell can source. scripts/ceph-down.sh stops it.
set -euo pipefail
D=${SHOAL_CEPH_DIR:-/var/tmp/shoal-ceph}
RGW_PORT=${SHOAL_RGW_PORT:-17480}
MON_V1=${SHOAL_MON_PORT:-16789}
MON_V2=$((MON_V1 + 1))
AK=SHOALTESTACCESSKEY01
SK=shoaltestsecretkey0000000000000000000001
ENDPOINT="http://127.0.0.1:$RGW_PORT"

if [ "${INSTALL:-0}" = 1 ]; then
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
    ceph-mon ceph-osd radosgw uuid-runtime curl >/dev/null
fi
for tool in ceph-mon ceph-osd radosgw radosgw-admin uuidgen curl; do
  command -v "$tool" >/dev/null || { echo "ceph-up: $tool is missing: run scripts/install-deps.sh" >&2; exit 2; }
done

alive() { [ -f "$1" ] && kill -0 "$(cat "$1")" 2>/dev/null; }

# Already up? (every daemon alive by its pid file, and the gateway answering)
if [ -f "$D/s3.env" ] && alive "$D/run/mon.a.pid" && alive "$D/run/osd.0.pid" && alive "$D/run/client.rgw.a.pid" \
   && curl -s -o /dev/null "$ENDPOINT/"; then
  echo "ceph-up: already running: $(tr '\n' ' ' < "$D/s3.env")"
  exit 0
fi

# Stop what a previous, broken start left (by pid file only), then start afresh.
"$(dirname "$0")/ceph-down.sh" >/dev/null 2>&1 || true
T0=$(date +%s.%N)
rm -rf "$D"
mkdir -p "$D"/{mon/ceph-a,osd/ceph-0,rgw,run,log,keys}
CONF=$D/ceph.conf
FSID=$(uuidgen)
cat > "$CONF" <<CONF
[global]
fsid = $FSID
mon host = [v2:127.0.0.1:$MON_V2,v1:127.0.0.1:$MON_V1]
public network = 127.0.0.0/8
auth cluster required = cephx
auth service required = cephx
auth client required = cephx
keyring = $D/keys/\$cluster.\$name.keyring
run dir = $D/run
pid file = $D/run/\$name.pid
admin socket = $D/run/\$name.asok
log file = $D/log/\$name.log
mon data = $D/mon/\$cluster-\$id
osd data = $D/osd/\$cluster-\$id
osd pool default size = 1
osd pool default min size = 1
osd pool default pg num = 8
osd pool default pgp num = 8
osd pool default pg autoscale mode = off
osd crush chooseleaf type = 0
mon allow pool size one = true
mon allow pool delete = true
mon warn on pool no redundancy = false
mon max pg per osd = 1000
mon data avail warn = 2
mon data avail crit = 1
ms bind ipv6 = false
[mon]
mon initial members = a
[osd]
osd objectstore = memstore
osd max object name len = 460
osd max object namespace len = 64
memstore device bytes = 6442450944
osd memory target = 1073741824
[client.rgw.a]
rgw frontends = beast endpoint=127.0.0.1:$RGW_PORT
rgw data = $D/rgw
rgw dns name = localhost
rgw enable usage log = false
CONF

C=(-c "$CONF")
fail() { echo "ceph-up: $1" >&2; [ -n "${2:-}" ] && tail -20 "$2" >&2; exit 1; }
ceph-authtool --create-keyring "$D/keys/ceph.mon.a.keyring" --gen-key -n mon. --cap mon 'allow *' >/dev/null
ceph-authtool --create-keyring "$D/keys/ceph.client.admin.keyring" --gen-key -n client.admin \
  --cap mon 'allow *' --cap osd 'allow *' --cap mds 'allow *' --cap mgr 'allow *' >/dev/null
ceph-authtool "$D/keys/ceph.mon.a.keyring" --import-keyring "$D/keys/ceph.client.admin.keyring" >/dev/null
monmaptool --create --fsid "$FSID" --addv a "[v2:127.0.0.1:$MON_V2,v1:127.0.0.1:$MON_V1]" "$D/monmap" >/dev/null
ceph-mon "${C[@]}" --mkfs -i a --monmap "$D/monmap" --keyring "$D/keys/ceph.mon.a.keyring"
ceph-mon "${C[@]}" -i a >>"$D/log/daemons.out" 2>&1
for _ in $(seq 1 60); do ceph "${C[@]}" --connect-timeout 2 -s >/dev/null 2>&1 && break; sleep 0.5; done
ceph "${C[@]}" --connect-timeout 5 -s >/dev/null 2>&1 || fail "the monitor did not come up" "$D/log/mon.a.log"
ceph "${C[@]}" config set mon auth_allow_insecure_global_id_reclaim false >/dev/null 2>&1 || true

OSD_UUID=$(uuidgen)
OSD_ID=$(ceph "${C[@]}" osd new "$OSD_UUID")
ceph-authtool --create-keyring "$D/keys/ceph.osd.$OSD_ID.keyring" --gen-key -n "osd.$OSD_ID" >/dev/null
ceph "${C[@]}" auth add "osd.$OSD_ID" osd 'allow *' mon 'allow profile osd' mgr 'allow profile osd' \
  -i "$D/keys/ceph.osd.$OSD_ID.keyring" >/dev/null 2>&1
ceph-osd "${C[@]}" -i "$OSD_ID" --mkfs --osd-uuid "$OSD_UUID" >"$D/log/osd-mkfs.log" 2>&1 \
  || fail "OSD mkfs failed" "$D/log/osd-mkfs.log"
HOST=$(hostname -s)
ceph "${C[@]}" osd crush add-bucket "$HOST" host >/dev/null 2>&1 || true
ceph "${C[@]}" osd crush move "$HOST" root=default >/dev/null 2>&1 || true
ceph "${C[@]}" osd crush add "osd.$OSD_ID" 1.0 host="$HOST" >/dev/null 2>&1 || true
ceph-osd "${C[@]}" -i "$OSD_ID" >>"$D/log/daemons.out" 2>&1
for _ in $(seq 1 120); do ceph "${C[@]}" osd dump 2>/dev/null | grep -q "^osd.$OSD_ID up" && break; sleep 0.5; done
ceph "${C[@]}" osd dump | grep -q "^osd.$OSD_ID up" || fail "the OSD did not come up" "$D/log/osd.$OSD_ID.log"

ceph "${C[@]}" auth get-or-create client.rgw.a mon 'allow rw' osd 'allow rwx' mgr 'allow rw' \
  > "$D/keys/ceph.client.rgw.a.keyring"
radosgw "${C[@]}" -n client.rgw.a >>"$D/log/daemons.out" 2>&1
for _ in $(seq 1 240); do curl -s -o /dev/null "$ENDPOINT/" && break; sleep 0.5; done
curl -s -o /dev/null "$ENDPOINT/" || fail "the RADOS Gateway did not come up" "$D/log/client.rgw.a.log"
radosgw-admin "${C[@]}" user create --uid=shoal --display-name="Shoal tests" \
  --access-key="$AK" --secret-key="$SK" >"$D/user.json"

cat > "$D/s3.env" <<ENV
AWS_ENDPOINT_URL=$ENDPOINT
AWS_ACCESS_KEY_ID=$AK
AWS_SECRET_ACCESS_KEY=$SK
AWS_REGION=us-east-1
ENV
printf 'ceph-up: ready in %.0fs: ' "$(awk "BEGIN{print $(date +%s.%N)-$T0}")"
tr '\n' ' ' < "$D/s3.env"; echo "(written to $D/s3.env)"
