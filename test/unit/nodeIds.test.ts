import { strict as assert } from 'node:assert';
import { randomUUID } from 'node:crypto';
import { NodeIdList, NodeIdMap } from '../../src/core/retrieve/nodeIds';

const list = (ids: string[]): NodeIdList => NodeIdList.fromLines(new TextEncoder().encode(ids.join('\n')), ids.length);

describe('node ids held as bytes (full-text segments)', () => {
  it('lists ids in order, whatever their characters', () => {
    const ids = ['a', '', 'ünïcode-ノード', randomUUID(), 'x'.repeat(300)];
    const l = list(ids);
    assert.equal(l.length, ids.length);
    assert.deepEqual(ids.map((_, i) => l.get(i)), ids);
    assert.equal(list([]).length, 0);
  });

  it('maps ids to documents over several lists, the newest copy of a node winning', () => {
    const first = Array.from({ length: 5000 }, () => randomUUID());
    const second = [first[10], randomUUID(), first[4999], 'ünïcode'];
    const third = [second[1], randomUUID()];
    const map = new NodeIdMap([list(first), list(second), list(third)]);
    assert.equal(map.get(first[0]), 0);
    assert.equal(map.get(first[11]), 11);
    assert.equal(map.get(first[10]), 5000, 'the copy in the second list');
    assert.equal(map.get(first[4999]), 5002);
    assert.equal(map.get(second[1]), 5004 + 0, 'the copy in the third list');
    assert.equal(map.get('ünïcode'), 5003);
    assert.equal(map.get(third[1]), 5005);
    assert.equal(map.get(randomUUID()), undefined);
    assert.equal(map.get(''), undefined);
    assert.equal(map.get(first[0].slice(0, 35)), undefined, 'a prefix is another id');
    for (const doc of [0, 17, 5000, 5003, 5005]) assert.equal(map.get(map.nodeId(doc)), doc, `document ${doc} is the newest copy of its node`);
    assert.equal(map.get(map.nodeId(4999)), 5002, 'an older copy names the newest');
    assert.equal(map.nodeId(5003), 'ünïcode');
    assert.equal(map.nodeId(5004), second[1]);
    // Looked up straight from bytes, e.g. an Arrow column's values and offsets.
    const column = new TextEncoder().encode(`zz${first[123]}yy`);
    assert.equal(map.getBytes(column, 2, 38), 123);
    assert.equal(map.getBytes(column, 2, 37), undefined);
    assert.equal(new NodeIdMap([]).get(first[0]), undefined);
  });
});
