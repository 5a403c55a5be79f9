// Node tests of the DOM-free parts of the renderer (document reading, step
// state, dagre layout). Run with `jlpm test` (compiles src/ to lib-test/ first).
const test = require('node:test');
const assert = require('node:assert/strict');

const { normalizeDocument } = require('../lib-test/schema.js');
const { Timeline, stateAt } = require('../lib-test/state.js');
const { computeLayout, topScopes } = require('../lib-test/layout.js');

/** A document like a training graph: `layers` scopes of `perLayer` nodes, chained. */
function bigDocument(layers, perLayer) {
  const nodes = [];
  const edges = [];
  const steps = [];
  let prev = null;
  for (let l = 0; l < layers; l++) {
    const scope = `layer${l}`;
    for (let i = 0; i < perLayer; i++) {
      const id = `n${l}_${i}`;
      const kind = i === 0 ? 'variable' : 'op';
      nodes.push({ id, name: `${scope}/sub${i % 3}/op${i}`, label: `op${i}`, op: 'add', kind,
        scope: `${scope}/sub${i % 3}`, shape: '(?, 64)', dtype: 'float32', location: 'x.py:1',
        value: null, grad: null });
      if (prev) {
        edges.push({ source: prev, target: id, label: '(?, 64)' });
      }
      if (i > 2) {
        edges.push({ source: `n${l}_${i - 3}`, target: id, label: '(?, 64)' });
      }
      steps.push({ phase: 'build', node: id });
      prev = id;
    }
  }
  return { version: 1, title: 'big', mode: 'static', nodes, edges, steps };
}

const small = {
  version: 1,
  title: 'c = a * b',
  mode: 'static',
  nodes: [
    { id: 'a', name: 'a', label: 'a', op: 'placeholder', kind: 'input', scope: '', shape: '()', dtype: 'float32', location: '', value: null, grad: null },
    { id: 'b', name: 'b', label: 'b', op: 'placeholder', kind: 'input', scope: '', shape: '()', dtype: 'float32', location: '', value: null, grad: '15.' },
    { id: 'c', name: 'layer/mul', label: 'mul', op: 'mul', kind: 'op', scope: 'layer', shape: '()', dtype: 'float32', location: '', value: '300.', grad: null }
  ],
  edges: [
    { source: 'a', target: 'c', label: '()' },
    { source: 'b', target: 'c', label: '()' },
    { source: 'a', target: 'nowhere', label: '()' }
  ],
  steps: [
    { phase: 'build', node: 'a' },
    { phase: 'build', node: 'b' },
    { phase: 'build', node: 'c' },
    { phase: 'forward', node: 'c', value: '[300.]', seconds: 1e-6 },
    { phase: 'backward', node: 'c', grad: '[1.]', grad_norm: 1.0 },
    { phase: 'backward', node: 'a', grad: '[20.]', grad_norm: 20.0 }
  ]
};

test('normalizeDocument keeps steps, drops dangling edges, survives junk', () => {
  const doc = normalizeDocument(small);
  assert.equal(doc.nodes.length, 3);
  assert.equal(doc.edges.length, 2);
  assert.equal(doc.steps.length, 6);
  assert.equal(normalizeDocument(null).nodes.length, 0);
  assert.equal(normalizeDocument('not json').nodes.length, 0);
  assert.equal(normalizeDocument({ nodes: [{ id: 1, name: { x: 1 } }] }).nodes[0].name, '{"x":1}');
});

test('stateAt follows build, forward and backward steps', () => {
  const t = new Timeline(normalizeDocument(small));
  assert.equal(stateAt(t, 0).visible.size, 0);
  assert.deepEqual([...stateAt(t, 2).visible], ['a', 'b']);
  const fwd = stateAt(t, 4);
  assert.equal(fwd.active, 'c');
  assert.equal(fwd.phase, 'forward');
  assert.equal(fwd.values.get('c'), '[300.]');
  assert.equal(fwd.grads.size, 0);
  const end = stateAt(t, 6);
  assert.equal(end.phase, 'backward');
  assert.equal(end.grads.get('a'), '[20.]');
  assert.equal(end.grads.get('b'), '15.'); // no backward step: shown once backward is done
  assert.deepEqual([...end.edgeNorms.keys()].sort(), [0, 1]); // edges into c
  assert.equal(t.normPosition(20), 1);
  assert.equal(t.normPosition(1), 0);
  assert.equal(stateAt(t, 99).step, 6);
});

test('the layered fallback handles cycles and ranks top to bottom', () => {
  const doc = normalizeDocument({
    nodes: ['a', 'b', 'c', 'd'].map(id => ({ id, name: id })),
    edges: [
      { source: 'a', target: 'b' },
      { source: 'b', target: 'c' },
      { source: 'c', target: 'b' },
      { source: 'c', target: 'd' }
    ]
  });
  const layout = computeLayout(doc, new Set(), { dagreLimit: 0 });
  assert.equal(layout.engine, 'layered');
  const y = id => layout.boxById.get('n:' + id).y;
  assert.ok(y('a') < y('b') && y('b') < y('c') && y('c') < y('d'));
});

test('collapsing a scope merges its nodes and edges', () => {
  const doc = normalizeDocument(small);
  const open = computeLayout(doc, new Set());
  assert.equal(open.boxes.length, 3);
  assert.equal(open.clusters.length, 1);
  const closed = computeLayout(doc, new Set(['layer']));
  assert.equal(closed.boxes.length, 3);
  assert.equal(closed.boxById.get('s:layer').members.length, 1);
  assert.equal(closed.clusters.length, 0);
  for (const b of open.boxes) {
    assert.ok(Number.isFinite(b.x) && Number.isFinite(b.y));
  }
  // Top to bottom: the inputs are above the product.
  assert.ok(open.boxById.get('n:a').y < open.boxById.get('n:c').y);
});

test('2,000 nodes with collapsed scopes lay out quickly', () => {
  const doc = normalizeDocument(bigDocument(20, 100));
  assert.equal(doc.nodes.length, 2000);
  const scopes = new Set(topScopes(doc).keys());
  const t0 = performance.now();
  const layout = computeLayout(doc, scopes);
  const ms = performance.now() - t0;
  assert.equal(layout.boxes.length, 20);
  assert.equal(layout.engine, 'dagre');
  assert.equal(layout.edges.length, 19);
  assert.ok(ms < 1000, `collapsed layout took ${ms.toFixed(0)} ms`);
  // And the step state of 2,000 build steps is cheap to recompute for every frame.
  const t = new Timeline(doc);
  const t1 = performance.now();
  for (let s = 0; s <= 2000; s += 50) {
    stateAt(t, s);
  }
  assert.ok(performance.now() - t1 < 1000);
  console.log(`# collapsed layout of 2000 nodes: ${ms.toFixed(1)} ms`);
});

test('2,000 nodes fully expanded still lay out', () => {
  const doc = normalizeDocument(bigDocument(20, 100));
  const t0 = performance.now();
  const layout = computeLayout(doc, new Set());
  const ms = performance.now() - t0;
  assert.equal(layout.boxes.length, 2000);
  // dagre overflows the stack on this 2,000-deep chain; the plain layered layout takes over.
  assert.equal(layout.engine, 'layered');
  for (const b of layout.boxes) {
    assert.ok(Number.isFinite(b.x) && Number.isFinite(b.y));
  }
  console.log(`# expanded layout of 2000 nodes: ${ms.toFixed(0)} ms (${layout.engine})`);
  assert.ok(ms < 2000, `expanded layout took ${ms.toFixed(0)} ms`);
});
