#!/usr/bin/env bash
# Keeps finished run folders as compact evidence: each run record (episodes, rollouts, samples, metrics, first
# attempts, gateway requests) is replaced by its gzip -9 form, `NAME.jsonl` → `NAME.jsonl.gz` (no name or time stored,
# so the same file always compresses to the same bytes). Summaries, configs, data exports and item files are left as
# they are: other commands read them by name.
#
# Apply it only to folders whose every reader accepts `*.jsonl.gz` (the record layer's readers do); then check that
# every BENCHMARKS table still regenerates, and commit:
#   bash bench/compact-runs.sh --dry-run bench/runs          # what would change, and the sizes
#   bash bench/compact-runs.sh bench/runs/engine bench/runs/controls
#   node bench/check-tables.mjs && git add -A bench/runs
# Usage: bash bench/compact-runs.sh [--dry-run] FOLDER...   (each searched recursively)
set -euo pipefail
cd "$(dirname "$0")/.."

dry=0
if [ "${1:-}" = "--dry-run" ]; then dry=1; shift; fi
[ $# -gt 0 ] || { echo "usage: bash bench/compact-runs.sh [--dry-run] FOLDER..." >&2; exit 2; }
for folder in "$@"; do
  [ -d "$folder" ] || { echo "$folder: not a folder" >&2; exit 2; }
done

records='^(episodes|rollouts|samples|metrics|first-attempts|requests)\.jsonl$'
before=0
after=0
count=0
while IFS= read -r -d '' file; do
  [[ "$(basename "$file")" =~ $records ]] || continue
  if [ -e "$file.gz" ]; then
    echo "$file.gz already exists beside $file: remove one of them first" >&2
    exit 1
  fi
  size=$(stat -c %s "$file")
  packed=$(gzip -9 -n -c "$file" | wc -c)
  before=$((before + size))
  after=$((after + packed))
  count=$((count + 1))
  if [ "$dry" -eq 1 ]; then
    printf '%10d → %9d  %s\n' "$size" "$packed" "$file"
  else
    gzip -9 -n -c "$file" > "$file.gz.tmp"
    # the compressed copy must read back as the original before the original goes
    cmp -s <(gunzip -c "$file.gz.tmp") "$file" || { rm -f "$file.gz.tmp"; echo "$file: compressed copy differs" >&2; exit 1; }
    mv "$file.gz.tmp" "$file.gz"
    rm "$file"
  fi
done < <(find "$@" -type f -name '*.jsonl' -print0 | sort -z)

verb=$([ "$dry" -eq 1 ] && echo "would compress" || echo "compressed")
echo "$verb $count record files: $((before / 1024)) KiB → $((after / 1024)) KiB"
