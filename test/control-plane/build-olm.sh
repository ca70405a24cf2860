#!/usr/bin/env bash
# Builds the real-OLM test bed from the Go module proxy into versioned cache directories outside the
# repository (next to the control-plane binaries of build.sh). Skips anything already built.
#
#   build-olm.sh [olm-version ...]     default: $OLM_VERSIONS or "v0.28.0 v0.25.0 v0.46.0"
#
# Per OLM version, into $root/olm-<version>/: `catalog` and `olm` (built inside a writable copy of OLM's
# module directory so OLM's own go.mod/go.sum and replace directives apply; version stamped, because the
# tags' OLM_VERSION files are stale) and the `opm` that OLM's go.mod requires (same module graph, cgo for
# sqlite). Once: kube-scheduler (from the control-plane wrapper module, same k8s version) into
# $root/kube-scheduler-<k8s>/ and kwok (sigs.k8s.io/kwok) into $root/kwok-<version>/.
# Prints one line per artefact on stdout: `<name> <path>`; progress and timings on stderr.
#
#   OLM_MEDIC_CACHE   cache root (default: $XDG_CACHE_HOME/olm-medic or ~/.cache/olm-medic)
#   OLM_BED_EXTRAS=0  OLM versions only (no catalog-server, kwok, kube-scheduler)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
OLM_MODULE=github.com/operator-framework/operator-lifecycle-manager
KWOK_VERSION=v0.7.0
CATALOG_SERVER_OLM=v0.28.0  # its operator-registry serves the test catalog (and lends its opm where needed)
K8S_VERSION=$(sed -nE 's#^[[:space:]]*k8s.io/kubernetes (v[0-9][0-9A-Za-z.+-]*).*#\1#p' "$here/go/go.mod" | head -1)
[ -n "$K8S_VERSION" ] || { echo "[olm-bed] cannot read k8s.io/kubernetes from go/go.mod" >&2; exit 1; }
versions=("$@")
[ ${#versions[@]} -gt 0 ] || read -r -a versions <<<"${OLM_VERSIONS:-v0.28.0 v0.25.0 v0.46.0}"
root=${OLM_MEDIC_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/olm-medic}
export GOTOOLCHAIN=local GOWORK=off
log() { echo "[olm-bed] $*" >&2; }
done_line() { echo "$1 $2"; }

prepare_src() { # version -> writable copy of OLM's module directory at $root/src/olm-<version>
  # Shared by every build of this version: made (and patched) once, under a lock, so a concurrent run
  # never sees it half-copied nor has a file it compiles rewritten under it.
  local v=$1 src="$root/src/olm-$1" dir fd
  mkdir -p "$root/src"
  exec {fd}>"$root/src/.olm-$v.lock"
  flock "$fd"
  if [ ! -f "$src/.ready" ]; then
    dir=$(GOFLAGS=-mod=mod go mod download -json "$OLM_MODULE@$v" | sed -nE 's/^[[:space:]]*"Dir": "(.*)",?$/\1/p')
    [ -n "$dir" ] && [ -d "$dir" ] || { log "cannot download $OLM_MODULE@$v"; exit 1; }
    rm -rf "$src"
    cp -r "$dir" "$src"; chmod -R u+w "$src"; rm -rf "$src/vendor"
    touch "$src/.ready"
  fi
  grep -q 'olmMedicLoopback("8080")' "$src/pkg/lib/server/server.go" 2>/dev/null && [ -f "$src/pkg/lib/server/olm_medic_loopback.go" ] || loopback_metrics "$src"
  exec {fd}>&-
}

# The one change made to OLM's source: its metrics server listens on ":8080" / ":8443" (every
# interface, hard-coded in pkg/lib/server/server.go getAddress, v0.25-v0.46), which breaks the test
# bed's network rule and makes catalog + olm fight over one port. Listen on 127.0.0.1 instead, port from
# OLM_MEDIC_METRICS_PORT (default: OLM's own). Nothing else in OLM is touched.
loopback_metrics() { # src
  local f="$1/pkg/lib/server/server.go"
  grep -q 'return ":8443"' "$f" && sed -i 's#return ":8443"#return olmMedicLoopback("8443")#; s#return ":8080"#return olmMedicLoopback("8080")#' "$f"
  grep -q 'olmMedicLoopback("8080")' "$f" || { log "cannot patch the metrics address in $f"; exit 1; }
  cat >"$1/pkg/lib/server/olm_medic_loopback.go" <<'GO'
package server

import "os"

// olmMedicLoopback is added by olm-medic's test bed (test/control-plane/build-olm.sh).
func olmMedicLoopback(port string) string {
	if p := os.Getenv("OLM_MEDIC_METRICS_PORT"); p != "" {
		port = p
	}
	return "127.0.0.1:" + port
}
GO
}

build_opm() { # version -> $root/olm-<version>/opm (or opm.unbuildable)
  local v=$1 out="$root/olm-$1" src="$root/src/olm-$1"
  mkdir -p "$out"
  [ -x "$out/opm" ] || [ -f "$out/opm.unbuildable" ] && return
  prepare_src "$v"
  local reg t1=$SECONDS
  reg=$(sed -nE 's#^[[:space:]]*github.com/operator-framework/operator-registry (v[^ ]+).*#\1#p' "$src/go.mod" | head -1)
  log "building opm $reg (required by OLM $v)..."
  # The unpack pod's opm is the --opmImage, independent of OLM's go.mod; if this version's opm does not
  # build with today's Go (operator-registry v1.17.5, OLM v0.25.0: generics under go 1.16 language
  # rules), the bed uses the catalog-server version's opm instead (bed.ts), built below.
  if (cd "$src" && CGO_ENABLED=1 GOFLAGS=-mod=mod go build -trimpath -tags json1,containers_image_openpgp \
    -ldflags "-s -w" -o "$out/opm.tmp.$$" github.com/operator-framework/operator-registry/cmd/opm) >&2; then
    mv -f "$out/opm.tmp.$$" "$out/opm"
    echo "$reg" >"$out/opm.version"
    log "built opm $reg in $((SECONDS - t1))s"
  else
    echo "$reg" >"$out/opm.unbuildable"
    log "opm $reg does not build with $(go env GOVERSION); OLM $v will use the $CATALOG_SERVER_OLM bed's opm"
  fi
}

build_olm() { # version
  local v=$1 out="$root/olm-$1" src="$root/src/olm-$1"
  mkdir -p "$out"
  if [ -f "$out/.loopback" ] && [ -x "$out/catalog" ] && [ -x "$out/olm" ] && { [ -x "$out/opm" ] || [ -f "$out/opm.unbuildable" ]; } && [ -f "$out/crds/.ready" ]; then
    log "olm $v: cached ($out)"; done_line "olm-$v" "$out"; return
  fi
  prepare_src "$v"
  local t0=$SECONDS
  if [ ! -f "$out/.loopback" ] || [ ! -x "$out/catalog" ] || [ ! -x "$out/olm" ]; then
    log "building OLM $v catalog + olm (first run only; ~10 min on 2 cores)..."
    (cd "$src" && CGO_ENABLED=0 GOFLAGS=-mod=mod go build -trimpath \
      -ldflags "-s -w -X $OLM_MODULE/pkg/version.OLMVersion=${v#v}" -o "$out/" ./cmd/catalog ./cmd/olm) >&2
    touch "$out/.loopback"
    log "built OLM $v catalog + olm in $((SECONDS - t0))s"
  fi
  build_opm "$v"
  if [ ! -f "$out/crds/.ready" ]; then # the operator-framework/api CRDs this OLM requires
    local api apidir
    api=$(sed -nE 's#^[[:space:]]*github.com/operator-framework/api (v[^ ]+).*#\1#p' "$src/go.mod" | head -1)
    apidir=$(cd "$src" && GOFLAGS=-mod=mod go mod download -json "github.com/operator-framework/api@$api" | sed -nE 's/^[[:space:]]*"Dir": "(.*)",?$/\1/p')
    rm -rf "$out/crds"; mkdir -p "$out/crds"
    cp "$apidir"/crds/operators.coreos.com_*.yaml "$out/crds/"
    echo "$api" >"$out/crds/.ready"
    log "copied operator-framework/api $api CRDs"
  fi
  done_line "olm-$v" "$out"
}

# `opm serve` listens on every interface (serve.go:153, ":"+port) and writes /etc/nsswitch.conf; the
# test bed serves catalogs with operator-registry's own cache/server on loopback instead (see main.go).
build_catalog_server() {
  local out="$root/olm-$CATALOG_SERVER_OLM" src="$root/src/olm-$CATALOG_SERVER_OLM"
  mkdir -p "$out"
  if [ ! -x "$out/catalog-server" ] || ! cmp -s "$here/olm/catalog-server/main.go" "$out/catalog-server.go"; then
    prepare_src "$CATALOG_SERVER_OLM"
    local t0=$SECONDS
    mkdir -p "$src/olm-medic-catalog-server"
    cp "$here/olm/catalog-server/main.go" "$src/olm-medic-catalog-server/main.go"
    (cd "$src" && CGO_ENABLED=1 GOFLAGS=-mod=mod go build -trimpath -tags json1 -ldflags "-s -w" \
      -o "$out/catalog-server.tmp.$$" ./olm-medic-catalog-server) >&2
    mv -f "$out/catalog-server.tmp.$$" "$out/catalog-server"
    cp "$here/olm/catalog-server/main.go" "$out/catalog-server.go"
    log "built catalog-server in $((SECONDS - t0))s"
  fi
  done_line catalog-server "$out/catalog-server"
}

build_scheduler() {
  local out="$root/kube-scheduler-$K8S_VERSION"
  mkdir -p "$out"
  if [ ! -x "$out/kube-scheduler" ]; then
    local minor=${K8S_VERSION#v1.}; minor=${minor%%.*} t0=$SECONDS
    log "building kube-scheduler $K8S_VERSION..."
    (cd "$here/go" && CGO_ENABLED=0 GOFLAGS=-mod=readonly go build -trimpath -ldflags "-s -w \
      -X k8s.io/component-base/version.gitVersion=$K8S_VERSION -X k8s.io/component-base/version.gitMajor=1 \
      -X k8s.io/component-base/version.gitMinor=$minor -X k8s.io/component-base/version.gitTreeState=clean" \
      -o "$out/kube-scheduler.tmp.$$" k8s.io/kubernetes/cmd/kube-scheduler) >&2
    mv -f "$out/kube-scheduler.tmp.$$" "$out/kube-scheduler"
    log "built kube-scheduler in $((SECONDS - t0))s"
  fi
  done_line kube-scheduler "$out/kube-scheduler"
}

build_kwok() { # kwok has no replace directives: a plain versioned install
  local out="$root/kwok-$KWOK_VERSION"
  mkdir -p "$out"
  if [ ! -x "$out/kwok" ]; then
    local t0=$SECONDS
    log "building kwok $KWOK_VERSION..."
    CGO_ENABLED=0 GOFLAGS= GOBIN="$out" go install -trimpath -ldflags "-s -w" "sigs.k8s.io/kwok/cmd/kwok@$KWOK_VERSION" >&2
    log "built kwok in $((SECONDS - t0))s"
  fi
  done_line kwok "$out/kwok"
}

first=1
for v in "${versions[@]}"; do
  build_olm "$v"
  if [ $first = 1 ] && [ "${OLM_BED_EXTRAS:-1}" = 1 ]; then build_catalog_server; build_kwok; build_scheduler; fi
  first=0
done
# A version whose own opm does not build borrows the catalog-server version's (bed.ts opmFor): make
# sure it is there even when that version's OLM is not part of this run.
for v in "${versions[@]}"; do
  if [ -f "$root/olm-$v/opm.unbuildable" ]; then build_opm "$CATALOG_SERVER_OLM"; break; fi
done
