#!/usr/bin/env bash
# LiteLLM's proxy as the peer of `reflect serve` in bench/gateway-dialects.mjs: a venv with one exact release of
# `litellm[proxy]`, built once outside the repository and reused. Prints the venv's python on stdout, so
#   node bench/gateway-dialects.mjs --litellm "$(bash bench/litellm-venv.sh)"
# Idempotent: a finished venv (marked by .complete, written last) is only checked; one without the mark (a cut
# install) is removed and built again. Built in place, since pip writes the venv's path into its scripts.
# The pin is the newest release (on 2026-11-28) whose `proxy` extra resolves from the package index: later ones pin
# `litellm-proxy-extras` releases, or from 1.110 a `litellm-proxy` distribution, that the index does not hold.
# Usage: bash bench/litellm-venv.sh [VERSION]    (env PYTHON: the interpreter to build from; default python3)
set -euo pipefail
version=${1:-1.108.7}
python=${PYTHON:-python3}
venv=${XDG_CACHE_HOME:-$HOME/.cache}/reflectkit/bench/litellm-$version
if [ ! -f "$venv/.complete" ]; then
  echo "building $venv with litellm[proxy]==$version (a few minutes)" >&2
  rm -rf "$venv"
  mkdir -p "$(dirname "$venv")"
  "$python" -m venv "$venv"
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check --upgrade pip >&2
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check "litellm[proxy]==$version" >&2
  touch "$venv/.complete"
fi
installed=$("$venv/bin/python" -c 'import importlib.metadata as m; print(m.version("litellm"))')
if [ "$installed" != "$version" ]; then
  echo "$venv holds litellm $installed, not $version: remove the folder and run this again" >&2
  exit 1
fi
LITELLM_LOCAL_MODEL_COST_MAP=True "$venv/bin/python" -c 'import litellm.proxy.proxy_cli' >/dev/null
echo "$venv/bin/python"
