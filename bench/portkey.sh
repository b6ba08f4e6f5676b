#!/usr/bin/env bash
# Portkey's AI gateway as a second peer of `reflect serve` in bench/gateway-dialects.mjs: one exact release of
# `@portkey-ai/gateway` installed once outside the repository with `npm install --prefix` and reused. Prints the path
# of its start script (build/start-server.js) on stdout, so
#   node bench/gateway-dialects.mjs --portkey "$(bash bench/portkey.sh)"
# Idempotent: a finished install (marked by .complete, written last) is only checked; one without the mark (a cut
# install) is removed and made again. The pin is the newest release on the package registry on 2026-12-03.
# @hono/node-server is held at 1.14.1 by an npm override: the gateway asks for ^1.3.3 (its @hono/node-ws for
# ^1.19.11), and from 1.14.2 on (1.14.2 and 1.19.19 tried) that server hands the gateway responses whose headers are
# immutable, so every streamed answer fails in its header step ("TypeError: immutable", a 500 "Something went
# wrong"), an incompatibility reported on Portkey's tracker and open there. The override leaves its WebSocket route
# (realtime, not measured) on an older server than node-ws asks for.
# Usage: bash bench/portkey.sh [VERSION]
set -euo pipefail
version=${1:-1.15.2}
hono_server=1.14.1
prefix=${XDG_CACHE_HOME:-$HOME/.cache}/reflectkit/bench/portkey-$version
start=$prefix/node_modules/@portkey-ai/gateway/build/start-server.js
if [ ! -f "$prefix/.complete" ]; then
  echo "installing @portkey-ai/gateway@$version into $prefix" >&2
  rm -rf "$prefix"
  mkdir -p "$prefix"
  # The package's own scripts (patch-package, husky) are for its development checkout, not for running its build.
  printf '{ "private": true, "dependencies": { "@portkey-ai/gateway": "%s" }, "overrides": { "@hono/node-server": "%s" } }\n' "$version" "$hono_server" >"$prefix/package.json"
  npm install --prefix "$prefix" --no-audit --no-fund --ignore-scripts --loglevel error >&2
  touch "$prefix/.complete"
fi
installed=$(node -p "require('$prefix/node_modules/@portkey-ai/gateway/package.json').version")
if [ "$installed" != "$version" ]; then
  echo "$prefix holds @portkey-ai/gateway $installed, not $version: remove the folder and run this again" >&2
  exit 1
fi
servers=$(cd "$prefix" && find node_modules -path '*/@hono/node-server/package.json' -exec node -p "require('./{}').version" \; | sort -u)
if [ "$servers" != "$hono_server" ]; then
  echo "$prefix runs @portkey-ai/gateway on @hono/node-server other than $hono_server: remove the folder and run this again" >&2
  exit 1
fi
if [ ! -f "$start" ]; then
  echo "$start is missing: remove $prefix and run this again" >&2
  exit 1
fi
echo "$start"
