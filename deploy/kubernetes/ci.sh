#!/usr/bin/env bash
# Offline validation of the Kubernetes manifests: the overlays of examples/*.txt (one
# collect Job per listed volume, then the merge Job) are generated, rendered with
# `kubectl kustomize` and checked against the Kubernetes API schemas with
# kubernetes-validate (PyPI). No cluster is contacted.
set -euo pipefail
cd "$(dirname "$0")/../.."
here=deploy/kubernetes
work=$PWD/target/kubernetes-ci
venv=$PWD/target/deploy-venv
if ! command -v kubectl >/dev/null 2>&1; then
  SUDO=""
  if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
  $SUDO apt-get update
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y kubernetes-client
fi
if [ ! -x "$venv/bin/kubernetes-validate" ]; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet ansible-core kubernetes-validate
fi
rm -rf "$work"
mkdir -p "$work"
for list in "$here"/examples/*.txt; do
  name=$(basename "$list" .txt)
  "$here/overlay.sh" "$work/$name" klogscan registry.example/klogscan:0.1.0 < "$list"
  for root in "$work/$name" "$work/$name/merge"; do
    out="$root/rendered.yaml"
    kubectl kustomize "$root" > "$out"
    "$venv/bin/kubernetes-validate" --strict "$out"
  done
  # One collect Job per listed volume, each reading it read-only.
  want=$(grep -cv '^#' "$list")
  jobs=$(grep -c '^kind: Job' "$work/$name/rendered.yaml")
  ro=$(grep -c 'readOnly: true' "$work/$name/rendered.yaml")
  [ "$jobs" -eq "$want" ] || { echo "$name: $jobs collect Jobs for $want volumes" >&2; exit 1; }
  [ "$ro" -ge $((2 * want)) ] || { echo "$name: a data volume is not mounted read-only" >&2; exit 1; }
done
echo "kubernetes: $(ls "$here"/examples/*.txt | wc -l) overlays rendered and valid"
