"""The shipped word vectors from fastText vectors (.vec), for the word-vector similarity of a
question and a record (src/core/retrieve/wordVectors.ts).

python3 vectors.py VECTORS.vec OUT.bin : each vector made unit length and stored as 8-bit
integers with a scale of its own. Layout (little-endian): "CMWV", uint32 version (1), uint32
words, uint32 dimensions; float32 scales[words]; int8 components[words * dimensions]; the
words in UTF-8, one a line, in the vectors' order.
"""

import struct
import sys

import numpy as np


def main():
    vec, out = sys.argv[1], sys.argv[2]
    words, rows = [], []
    with open(vec, encoding='utf-8') as f:
        n, d = map(int, f.readline().split())
        for line in f:
            parts = line.rstrip().split(' ')
            if len(parts) != d + 1 or parts[0] == '</s>' or '\n' in parts[0]:
                continue
            words.append(parts[0])
            rows.append(np.array(parts[1:], dtype=np.float32))
    vectors = np.array(rows)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True) + 1e-9
    scales = np.abs(vectors).max(axis=1) / 127
    quantized = np.round(vectors / scales[:, None]).astype(np.int8)
    with open(out, 'wb') as f:
        f.write(b'CMWV' + struct.pack('<III', 1, len(words), d))
        f.write(scales.astype('<f4').tobytes())
        f.write(quantized.tobytes())
        f.write('\n'.join(words).encode('utf-8'))
    print(f'{len(words)} words x {d}', file=sys.stderr)


main()
