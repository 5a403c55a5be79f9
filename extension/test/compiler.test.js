// Node tests of the compiler view's stage documents and the stepper section (DOM-free).
// Run with `jlpm test` (compiles src/ to lib-test/ first).
const test = require('node:test');
const assert = require('node:assert/strict');

const { normalizeDocument } = require('../lib-test/schema.js');
const { Timeline, stateAt } = require('../lib-test/state.js');
const { computeLayout } = require('../lib-test/layout.js');
const { defaultStage, drawable, formatBytes, groupKey, stageDocument, stageIndex } = require('../lib-test/compiler.js');

const node = (id, name, op, kind = 'op') => ({ id, name, label: name, op, kind, scope: '', shape: '(3,)', dtype: 'float32', device: 'cpu', location: '', value: null, grad: null });

// y = relu(x * (2 * 3)): folded, then mul and relu fused; the 2 and 3 removed by dce.
const compilerDoc = {
  version: 1,
  title: 'compiler: Session.run(relu)',
  mode: 'static',
  nodes: [node('n1', 'x', 'placeholder', 'input'), node('n5', 'relu', 'fused_ab', 'op')],
  edges: [{ source: 'n1', target: 'n5', label: '(3,)' }],
  steps: [],
  compiler: {
    stages: [
      {
        name: 'as written', skipped: false, before: 5, after: 5, seconds: 0, changes: [],
        nodes: [node('n1', 'x', 'placeholder', 'input'), node('n2', 'a', 'const', 'const'), node('n3', 'b', 'const', 'const'), node('n4', 'mul', 'mul'), node('n6', 'mul_1', 'mul'), node('n5', 'relu', 'relu')],
        edges: [{ source: 'n2', target: 'n4' }, { source: 'n3', target: 'n4' }, { source: 'n1', target: 'n6' }, { source: 'n4', target: 'n6' }, { source: 'n6', target: 'n5' }],
        marks: {}, notes: {}, groups: [], fetches: ['n5']
      },
      {
        name: 'fold_constants', before: 6, after: 6, seconds: 1e-4, changes: ['folded mul'],
        nodes: [node('n1', 'x', 'placeholder', 'input'), node('n2', 'a', 'const', 'const'), node('n3', 'b', 'const', 'const'), node('n4', 'mul', 'const', 'const'), node('n6', 'mul_1', 'mul'), node('n5', 'relu', 'relu')],
        edges: [{ source: 'n1', target: 'n6' }, { source: 'n4', target: 'n6' }, { source: 'n6', target: 'n5' }],
        marks: { n4: 'folded' }, notes: { n4: 'folded: mul computed at compile time' }, groups: []
      },
      { name: 'cse', skipped: true },
      {
        name: 'fuse', before: 6, after: 5, seconds: 2e-3, changes: ['relu <- mul_1'],
        nodes: [node('n1', 'x', 'placeholder', 'input'), node('n2', 'a', 'const', 'const'), node('n3', 'b', 'const', 'const'), node('n4', 'mul', 'const', 'const'), node('n6', 'mul_1', 'mul'), node('n5', 'relu', 'relu')],
        edges: [{ source: 'n1', target: 'n6' }, { source: 'n4', target: 'n6' }, { source: 'n6', target: 'n5' }],
        marks: { n6: 'fused', n5: 'fused' }, groups: [{ id: 'n5', name: 'relu', kernel: 'fused_ab', members: ['n6', 'n5'] }]
      }
    ],
    selected: 3,
    optimized: true,
    skipped: ['cse'],
    compile_seconds: 0.01,
    passes_seconds: 0.002,
    run_seconds: null,
    memory: { peak_bytes: 24, naive_bytes: 36, buffers: 2, slots: { n5: 0, junk: 'x' }, in_place: ['n5'] },
    kernels: [{ id: 'n5', name: 'relu', kernel: 'fused_ab', members: ['mul_1', 'relu'], source: 'def fused(x0, x1):\n    return 1' }],
    plan_source: 'def _run(f0):\n    ...'
  }
};

test('the compiler section is read, with skipped passes not drawable', () => {
  const doc = normalizeDocument(compilerDoc);
  const c = doc.compiler;
  assert.equal(c.stages.length, 4);
  assert.equal(c.stages[2].skipped, true);
  assert.equal(drawable(c, 2), false);
  assert.equal(drawable(c, 3), true);
  assert.equal(defaultStage(c), 3);
  assert.equal(stageIndex(c, 'cse'), null);
  assert.equal(stageIndex(c, 'fold_constants'), 1);
  assert.deepEqual(c.skipped, ['cse']);
  assert.equal(c.memory.peakBytes, 24);
  assert.deepEqual([...c.memory.slots], [['n5', 0]]); // a junk slot is dropped
  assert.equal(c.memory.inPlace.has('n5'), true);
  assert.equal(c.runSeconds, null);
  assert.equal(normalizeDocument({ compiler: { memory: { peak_bytes: null } } }).compiler.memory.peakBytes, null);
  assert.equal(c.kernels[0].source.split('\n')[0], 'def fused(x0, x1):');
  assert.equal(normalizeDocument({ compiler: 'junk' }).compiler.stages.length, 0);
  assert.equal(normalizeDocument({}).compiler, null);
  assert.equal(defaultStage(normalizeDocument({ compiler: { stages: [{ name: 'x', skipped: true }] } }).compiler), -1);
});

test('a stage document carries marks and groups its fused members', () => {
  const doc = normalizeDocument(compilerDoc);
  const folded = stageDocument(doc, 1);
  assert.equal(folded.nodes.length, 6);
  assert.equal(folded.byId.get('n4').mark, 'folded');
  assert.equal(folded.byId.get('n4').op, 'const');
  assert.equal(folded.byId.get('n4').note, 'folded: mul computed at compile time');
  assert.equal(folded.byId.get('n6').mark, '');
  assert.equal(folded.edges.length, 3);
  const written = stageDocument(doc, 0);
  assert.equal(written.byId.get('n4').op, 'mul'); // the same id, another node
  const fused = stageDocument(doc, 3);
  const key = groupKey({ name: 'relu' });
  assert.equal(fused.groups.get(key).kernel, 'fused_ab');
  assert.equal(fused.byId.get('n6').topScope, key);
  assert.equal(fused.byId.get('n1').topScope, '');
  const layout = computeLayout(fused, new Set());
  assert.deepEqual(layout.clusters.map(c => [c.scope, c.count]), [[key, 2]]);
  const collapsed = computeLayout(fused, new Set([key]));
  assert.equal(collapsed.boxById.get('s:' + key).members.length, 2);
  assert.equal(stageDocument(doc, 2), doc); // skipped: nothing to draw
  assert.equal(stageDocument(normalizeDocument({ nodes: [] }), 0).compiler, null);
});

test('the stepper section and the executed nodes of the step state', () => {
  const doc = normalizeDocument({
    nodes: [node('a', 'a', 'placeholder', 'input'), node('c', 'c', 'mul'), node('d', 'd', 'add')],
    edges: [{ source: 'a', target: 'c' }, { source: 'c', target: 'd' }],
    steps: [{ phase: 'forward', node: 'c', value: '6', seconds: 1e-6 }],
    stepper: { order: ['c', 'd'], position: 1, total: 2, next: 'd', done: false, error: null, optimized: false }
  });
  assert.equal(doc.stepper.next, 'd');
  assert.equal(doc.stepper.error, null);
  assert.equal(doc.stepper.total, 2);
  const st = stateAt(new Timeline(doc), 1);
  assert.deepEqual([...st.executed], ['c']);
  assert.equal(st.active, 'c');
  assert.equal(stateAt(new Timeline(doc), 0).executed.size, 0);
  const junk = normalizeDocument({ stepper: { position: 'x', next: 3, error: '' } });
  assert.equal(junk.stepper.position, 0);
  assert.equal(junk.stepper.next, '3');
  assert.equal(junk.stepper.error, null);
});

test('formatBytes', () => {
  assert.equal(formatBytes(512), '512 B');
  assert.equal(formatBytes(1536), '1.5 KiB');
  assert.equal(formatBytes(3 * 2 ** 20), '3 MiB');
});
