#!/usr/bin/env bash
# Builds the base image without an image registry: debootstrap a minimal Debian trixie from the
# apt mirror this machine already uses, then `docker import` the tree.
#
#   images/base/build-offline.sh [--force] [TAG]     (default TAG: harness-base:trixie)
#   images/base/build-offline.sh --apt-source        prints the mirror and suite it would use
#
# The image carries a `harness.inputs` label: the hash of this script, the package list and the
# mirror. When an image with that tag and label exists the build is skipped, so running it again
# costs a `docker image inspect`. Downloaded .debs are kept in .cache/debootstrap-debs so a rebuild
# on the same machine does not fetch them again.
#
# trixie's python3 is 3.13, the Python scripts/bootstrap makes .venv with where the host has it: the
# wheelhouse (cp313 wheels, pinned to .venv's versions) runs what the host tested.
# libfaketime is here (not only in the arm image) so that the arm image needs no apt at build time.
set -euo pipefail
ROOT="$(cd "$(dirname "$0")/../.." && pwd)"
FORCE=0
if [ "${1:-}" = "--force" ]; then FORCE=1; shift; fi
TAG="${1:-harness-base:trixie}"
SUITE=trixie
PACKAGES="python3,python3-venv,libfaketime,ca-certificates,iproute2,tzdata"

say() { echo "base: $*" >&2; }

# The mirror the machine reaches: the first deb.debian.org-style URI for the main archive in apt's
# sources (deb822 or one-line format). HARNESS_DEBIAN_MIRROR overrides.
mirror() {
    if [ -n "${HARNESS_DEBIAN_MIRROR:-}" ]; then echo "$HARNESS_DEBIAN_MIRROR"; return; fi
    local found
    found="$(cat /etc/apt/sources.list /etc/apt/sources.list.d/*.sources \
                 /etc/apt/sources.list.d/*.list 2>/dev/null \
             | grep -oE 'https?://[^ ]+/debian/?( |$)' | grep -v -- '-security' | head -n1 \
             | tr -d ' ' || true)"
    echo "${found:-http://deb.debian.org/debian}"
}
MIRROR="$(mirror)"
# harness/images/node.py fetches the suite's Node.js packages from the same mirror.
if [ "${1:-}" = "--apt-source" ]; then echo "$MIRROR $SUITE"; exit 0; fi

INPUTS="$( { cat "$0"; echo "$SUITE $PACKAGES $MIRROR"; } | sha256sum | cut -c1-16)"

if [ "$FORCE" = 0 ]; then
    have="$(docker image inspect --format '{{ index .Config.Labels "harness.inputs" }}' "$TAG" \
            2>/dev/null || true)"
    if [ "$have" = "$INPUTS" ]; then
        say "$TAG is up to date (inputs $INPUTS); skipped"
        exit 0
    fi
fi

command -v debootstrap >/dev/null 2>&1 || {
    say "debootstrap is missing: run scripts/ensure-docker as root, or apt-get install debootstrap"
    exit 1
}
[ "$(id -u)" = 0 ] || { say "debootstrap needs root"; exit 1; }

CACHE="$ROOT/.cache"
mkdir -p "$CACHE/debootstrap-debs"
[ -f "$CACHE/.gitignore" ] || echo '*' > "$CACHE/.gitignore"
WORK="$(mktemp -d "$CACHE/rootfs.XXXXXX")"
trap 'rm -rf "$WORK"' EXIT

start=$(date +%s)
say "debootstrap --variant=minbase $SUITE from $MIRROR (+ $PACKAGES)"
debootstrap --variant=minbase --include="$PACKAGES" --cache-dir="$CACHE/debootstrap-debs" \
    "$SUITE" "$WORK/root" "$MIRROR" >"$CACHE/debootstrap.log" 2>&1 || {
    say "debootstrap failed; last lines of $CACHE/debootstrap.log:"
    tail -n 20 "$CACHE/debootstrap.log" >&2
    exit 1
}

# Slim the tree: apt lists, docs, man pages and locales are never used inside a container.
R="$WORK/root"
rm -rf "$R"/var/lib/apt/lists/* "$R"/var/cache/apt/*.bin "$R"/var/cache/apt/archives/*.deb \
       "$R"/usr/share/doc/* "$R"/usr/share/man/* "$R"/usr/share/info/* "$R"/var/log/*.log
find "$R/usr/share/locale" -mindepth 1 -maxdepth 1 ! -name 'locale.alias' -exec rm -rf {} + \
    2>/dev/null || true
# The archive mirror stays in sources.list so that `apt-get` inside a derived image works where
# a network allows it.
echo "deb $MIRROR $SUITE main" >"$R/etc/apt/sources.list"

say "docker import $TAG"
tar -C "$R" --numeric-owner -c . | docker import \
    --change "LABEL harness.inputs=$INPUTS" \
    --change "LABEL harness.image=base" \
    --change 'ENV LANG=C.UTF-8' \
    --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
    --change 'CMD ["/bin/bash"]' \
    - "$TAG" >/dev/null
say "$TAG built in $(( $(date +%s) - start ))s (inputs $INPUTS, $(docker image inspect \
    --format '{{.Size}}' "$TAG" | awk '{printf "%d MB", $1/1e6}'))"
