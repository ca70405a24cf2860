#!/usr/bin/env bash
# Builds the test control plane (etcd, kube-apiserver, kube-controller-manager) and Knative's
# ApiServerSource receive adapter (and kustomize, to render infra/) from the Go module proxy into a versioned cache directory
# outside the repository. Skips any binary that is already there. Prints progress.
#
#   OLM_MEDIC_CACHE   cache root (default: $XDG_CACHE_HOME/olm-medic or ~/.cache/olm-medic)
#   prints the bin directory on the last line of stdout.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
modver() { # module-dir module-path -> version from that go.mod (single-line or block require)
  sed -nE "s#^(require)?[[:space:]]*$2 (v[0-9][0-9A-Za-z.+-]*).*#\\2#p" "$here/$1/go.mod" | head -1
}
K8S_VERSION=$(modver go k8s.io/kubernetes)
ETCD_VERSION=$(modver go go.etcd.io/etcd/server/v3)
ADAPTER_VERSION=$(modver adapter knative.dev/eventing)
KUSTOMIZE_VERSION=v5.8.0  # v5.8.1+ need Go >= 1.27
for v in K8S_VERSION ETCD_VERSION ADAPTER_VERSION; do
  [ -n "${!v}" ] || { echo "[control-plane] cannot read $v from the wrapper go.mod files" >&2; exit 1; }
done
root=${OLM_MEDIC_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/olm-medic}
bin="$root/k8s-$K8S_VERSION-etcd-$ETCD_VERSION-eventing-$ADAPTER_VERSION-kustomize-$KUSTOMIZE_VERSION"
mkdir -p "$bin"
export GOTOOLCHAIN=local GOWORK=off CGO_ENABLED=0 GOFLAGS=-mod=readonly

minor=${K8S_VERSION#v1.}; minor=${minor%%.*}
ldk="-s -w -X k8s.io/component-base/version.gitVersion=$K8S_VERSION -X k8s.io/component-base/version.gitMajor=1 \
-X k8s.io/component-base/version.gitMinor=$minor -X k8s.io/component-base/version.gitTreeState=clean \
-X k8s.io/client-go/pkg/version.gitVersion=$K8S_VERSION"

build() { # name dir pkg ldflags
  local name=$1 dir=$2 pkg=$3 ld=$4
  if [ -x "$bin/$name" ]; then echo "[control-plane] $name: cached ($bin/$name)" >&2; return; fi
  echo "[control-plane] building $name from the Go module proxy (first run only; several minutes on 2 cores)..." >&2
  local t0=$SECONDS
  # A temporary name of this process's own: two runs building at once (tests and a benchmark started
  # side by side) each move a whole binary into place; the second mv replaces the first's with the same build.
  (cd "$here/$dir" && go build -trimpath -ldflags "$ld" -o "$bin/$name.tmp.$$" "$pkg") >&2
  mv -f "$bin/$name.tmp.$$" "$bin/$name"
  echo "[control-plane] built $name in $((SECONDS - t0))s ($(du -h "$bin/$name" | cut -f1))" >&2
}

build etcd go go.etcd.io/etcd/server/v3 "-s -w"
build kube-apiserver go k8s.io/kubernetes/cmd/kube-apiserver "$ldk"
build kube-controller-manager go k8s.io/kubernetes/cmd/kube-controller-manager "$ldk"
build apiserver_receive_adapter adapter knative.dev/eventing/cmd/apiserver_receive_adapter "-s -w"
# knative-check (Knative's own defaulting/validation/Trigger filtering, see knative-check/main.go): named by a
# hash of its sources so an edit rebuilds it. Next to it, the CRDs and the default ConfigMaps of the same
# knative.dev/eventing and knative.dev/serving module versions, copied from the module cache.
kc_hash=$(cd "$here/knative-check" && cat go.mod go.sum main.go | sha256sum | cut -c1-12)
build "knative-check-$kc_hash" knative-check . "-s -w"
find "$bin" -maxdepth 1 -name 'knative-check-*' ! -name "knative-check-$kc_hash" ! -name '*.tmp.*' -delete  # stale builds (not another run's build under way)
SERVING_VERSION=$(modver knative-check knative.dev/serving)
[ "$(modver knative-check knative.dev/eventing)" = "$ADAPTER_VERSION" ] || { echo "[control-plane] knative-check/go.mod must require knative.dev/eventing $ADAPTER_VERSION (the adapter's)" >&2; exit 1; }
kdir="$bin/knative-$ADAPTER_VERSION-serving-$SERVING_VERSION"
if [ ! -d "$kdir" ]; then
  moddir() { (cd "$here/knative-check" && GOFLAGS= go mod download -json "$1" | sed -nE 's/^[[:space:]]*"Dir": "(.*)",?$/\1/p'); }
  ed=$(moddir "knative.dev/eventing@$(modver knative-check knative.dev/eventing)"); sd=$(moddir "knative.dev/serving@$SERVING_VERSION")
  [ -d "$ed/config/core/resources" ] && [ -d "$sd/config/core/300-resources" ] || { echo "[control-plane] Knative config not found in $ed / $sd" >&2; exit 1; }
  ktmp="$kdir.tmp.$$"
  mkdir -p "$ktmp"/{eventing,serving}/{crds,configmaps}
  cp "$ed"/config/core/resources/*.yaml "$ktmp/eventing/crds/"; cp "$ed"/config/core/configmaps/*.yaml "$ktmp/eventing/configmaps/"
  cp "$sd"/config/core/300-resources/*.yaml "$ktmp/serving/crds/"; cp "$sd"/config/core/configmaps/*.yaml "$ktmp/serving/configmaps/"
  chmod -R u+w "$ktmp"
  # Another run may have put the same files in place meanwhile: keep its copy.
  mv -T "$ktmp" "$kdir" 2>/dev/null || rm -rf "$ktmp"
  echo "[control-plane] Knative CRDs and default ConfigMaps in $kdir" >&2
fi
# kustomize has no replace directives, so a plain versioned install works.
if [ ! -x "$bin/kustomize" ]; then
  echo "[control-plane] building kustomize $KUSTOMIZE_VERSION from the Go module proxy..." >&2
  GOFLAGS= GOBIN="$bin" go install "sigs.k8s.io/kustomize/kustomize/v5@$KUSTOMIZE_VERSION" >&2
fi
echo "$bin"
