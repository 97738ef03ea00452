"""The word-neighbour table from fastText vectors (.vec): each word's nearest words by cosine.

python3 neighbours.py VECTORS.vec OUT.txt [K] [MIN] : `word<TAB>n1:sim,n2:sim...`, at most K
neighbours (default 5) of similarity MIN or more (default 0.45), nearest first.
"""

import sys

import numpy as np


def main():
    vec, out = sys.argv[1], sys.argv[2]
    k = int(sys.argv[3]) if len(sys.argv) > 3 else 5
    least = float(sys.argv[4]) if len(sys.argv) > 4 else 0.45
    with open(vec) as f:
        n, d = map(int, f.readline().split())
        words = []
        vectors = np.zeros((n, d), dtype=np.float32)
        for i, line in enumerate(f):
            parts = line.rstrip().split(' ')
            words.append(parts[0])
            vectors[i] = np.array(parts[1:], dtype=np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True) + 1e-9
    lines = []
    for start in range(0, n, 2000):
        sims = vectors[start:start + 2000] @ vectors.T
        for i in range(sims.shape[0]):
            row = sims[i]
            row[start + i] = -1
            top = np.argpartition(-row, k)[:k]
            top = top[np.argsort(-row[top])]
            near = [f'{words[j]}:{row[j]:.2f}' for j in top if row[j] >= least]
            if near and words[start + i] != '</s>':
                lines.append(f'{words[start + i]}\t{",".join(near)}')
    with open(out, "w") as f:
        f.write('\n'.join(sorted(lines)) + '\n')
    print(f'{len(lines)} words', file=sys.stderr)


main()
