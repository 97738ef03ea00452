#!/usr/bin/env bash
# Rebuilds data/word-neighbours.txt and data/word-vectors.bin (see src/core/retrieve/
# wordNeighbours.ts and wordVectors.ts) on a Debian machine: installs the documentation packages
# of packages.txt and Debian's fastText, extracts their text, prepares it with the product's own
# tokenizer, trains 100-dimension skip-gram word vectors, keeps each word's nearest words and
# the vectors themselves (8-bit). About 30 minutes on 2 cores; fastText trains on 2 threads, so
# two builds differ a little. Needs root for apt-get, python3 with numpy, and the
# checkout's node_modules (npm ci).
#   bash scripts/word-neighbours/build.sh [work dir]
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
work="${1:-$(mktemp -d)}"
mkdir -p "$work"
packages=$(grep -v '^#' "$here/packages.txt")

# A documentation package must never bring Debian's nodejs in, or take the machine's out.
if apt-get install -s --no-install-recommends fasttext $packages | grep -E '^(Inst|Remv) (nodejs|libnode)'; then
  echo "refusing: these packages would install or remove Node.js" >&2
  exit 1
fi
apt-get install -y -q --no-install-recommends fasttext $packages > "$work/apt.log"

dirs=$(for p in $packages; do [ -d "/usr/share/doc/$p" ] && echo "/usr/share/doc/$p"; done)
python3 "$here/extract.py" "$work/corpus.txt" $dirs /usr/share/doc/python3.11/html /usr/share/doc/rust-doc/html "$root/node_modules"
(cd "$root" && npx tsx scripts/word-neighbours/tokenize.ts "$work/corpus.txt" "$work/terms.txt")
fasttext skipgram -input "$work/terms.txt" -output "$work/vectors" -dim 100 -ws 8 -epoch 10 -minCount 10 -minn 0 -maxn 0 -thread 2 -verbose 0
python3 "$here/neighbours.py" "$work/vectors.vec" "$root/data/word-neighbours.txt" 10 0.45
python3 "$here/vectors.py" "$work/vectors.vec" "$root/data/word-vectors.bin"
echo "wrote $root/data/word-neighbours.txt and $root/data/word-vectors.bin (work files in $work)"
