#!/usr/bin/env bash
# The playbook end to end, for real, on this machine: three brokers of a testkit
# scenario (a transaction across brokers 1 and 2 whose coordinator is on broker 3), each a
# host of the `kafka_broker` group on localhost (ansible_connection=local) with its own
# log dirs named by its own properties file. The merged report must equal, byte for
# byte, `klogscan scan` over all those log dirs. The hosts' working dirs sit under this
# checkout's scratch dir (not the playbook's default /tmp/klogscan-<host>), so two CI runs
# on one machine never share them.
set -euo pipefail
cd "$(dirname "$0")/../.."
export LC_ALL=C.UTF-8 ANSIBLE_NOCOLOR=1 ANSIBLE_LOCALHOST_WARNING=0 ANSIBLE_INVENTORY_UNPARSED_WARNING=0
# Build output where cargo puts it (CARGO_TARGET_DIR when set); scratch under target/.
built=$(realpath -m "${CARGO_TARGET_DIR:-target}")
work=$PWD/target/ansible-ci
venv=$PWD/target/deploy-venv
rm -rf "$work"
mkdir -p "$work"
if [ ! -x "$venv/bin/ansible-playbook" ] || [ ! -x "$venv/bin/kubernetes-validate" ]; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet ansible-core kubernetes-validate
fi
cargo build --locked --quiet --features testkit --bin klogscan --example brokers
bin=$built/debug/klogscan
"$built/debug/examples/brokers" "$work/data" cross_broker_txn > "$work/brokers.tsv"
# broker-1 names its properties file as cp-ansible does (kafka_broker.config_file), the
# others through klogscan_properties_file.
{
  echo "all:"
  echo "  vars: {ansible_connection: local, ansible_python_interpreter: $venv/bin/python}"
  echo "  children:"
  echo "    kafka_broker:"
  echo "      hosts:"
  while IFS=$'\t' read -r name props; do
    if [ "$name" = broker-1 ]; then
      echo "        $name: {kafka_broker: {config_file: $props}}"
    else
      echo "        $name: {klogscan_properties_file: $props}"
    fi
  done < "$work/brokers.tsv"
} > "$work/hosts.yml"
"$venv/bin/ansible-playbook" -i "$work/hosts.yml" deploy/ansible/klogscan.yml \
  -e "klogscan_binary=$bin" -e "klogscan_bundle_dir=$work/bundles" \
  -e "klogscan_output=$work/merged.json" -e "klogscan_remote_dir=$work/remote/{{ inventory_hostname }}"
mapfile -t dirs < <(cut -f2 "$work/brokers.tsv" | xargs sed -n 's/^log\.dirs=//p' | tr ',' '\n')
"$bin" scan "${dirs[@]}" --format json > "$work/scan.json" || [ $? -eq 1 ]
cmp "$work/scan.json" "$work/merged.json"
echo "ansible: merged report of ${#dirs[@]} log dirs on $(wc -l < "$work/brokers.tsv") hosts equals the scan ($(wc -c < "$work/merged.json") bytes)"
