// Node tests of what a renderer shows (the view model: step, compiler stage, collapsed
// scopes, search), DOM-free. Run with `jlpm test` (compiles src/ to lib-test/ first).
const test = require('node:test');
const assert = require('node:assert/strict');

const { ViewModel } = require('../lib-test/view-model.js');

const node = (id, scope = '', kind = 'op') => ({ id, name: scope ? `${scope}/${id}` : id, label: id, op: 'add', kind, scope, shape: '', dtype: '', device: 'cpu', location: '', value: null, grad: null });

/** A chain of `n` nodes, the ones after the first in scope `scope`, built step by step. */
function chain(n, scope = 'layer') {
  const nodes = Array.from({ length: n }, (_, i) => node(`n${i}`, i === 0 ? '' : scope, i === 0 ? 'input' : 'op'));
  const edges = nodes.slice(1).map((m, i) => ({ source: nodes[i].id, target: m.id, label: '' }));
  const steps = nodes.map(m => ({ phase: 'build', node: m.id }));
  return { version: 1, title: 't', nodes, edges, steps };
}

test('a first document is shown at its end; a new one keeps the step, or the end', () => {
  const view = new ViewModel({});
  view.setDocument(chain(5));
  assert.equal(view.step, 5);
  view.setDocument(chain(8));
  assert.equal(view.step, 8); // was at the end: stays at the end
  view.step = 3;
  view.setDocument(chain(6));
  assert.equal(view.step, 3);
  view.setDocument(chain(2));
  assert.equal(view.step, 2); // clamped
  view.setDocument(chain(6), { step: n => n - 4 });
  assert.equal(view.step, 2);
  view.setDocument(chain(6), { step: 99 });
  assert.equal(view.step, 6);
});

test('new scopes start collapsed only in a big graph; known ones keep their state', () => {
  const view = new ViewModel({ collapseAbove: 10 });
  view.setDocument(chain(5));
  assert.deepEqual([...view.collapsed], []);
  view.toggleScope('layer');
  assert.deepEqual([...view.collapsed], ['layer']);
  view.setDocument(chain(20)); // 'layer' is known: stays collapsed
  assert.deepEqual([...view.collapsed], ['layer']);
  view.setDocument(chain(20, 'other')); // a new scope in a big graph
  assert.deepEqual([...view.collapsed], ['other']);
  view.setCollapsed(['other', 'unknown']);
  assert.deepEqual([...view.collapsed], ['other']);
});

test('the search matches names and expands the scopes hiding them', () => {
  const view = new ViewModel({ collapseAbove: 3 });
  view.setDocument(chain(6));
  assert.deepEqual([...view.collapsed], ['layer']);
  view.setQuery('  LAYER/N3 ');
  assert.equal(view.query, 'layer/n3');
  assert.deepEqual([...view.matches], ['n3']);
  assert.equal(view.firstMatch().id, 'n3');
  assert.equal(view.expandMatches(), true);
  assert.deepEqual([...view.collapsed], []);
  assert.equal(view.expandMatches(), false);
  view.setDocument(chain(6)); // matches follow the new document
  assert.deepEqual([...view.matches], ['n3']);
});

test('a compiler view shows the selected stage, and keeps the one picked across documents', () => {
  const stage = (name, ids, extra = {}) => ({ name, before: ids.length, after: ids.length, changes: [], nodes: ids.map(id => node(id)), edges: [], marks: {}, ...extra });
  const doc = {
    version: 1, title: 'c', nodes: [node('a')], edges: [], steps: [],
    compiler: { stages: [stage('as written', ['a', 'b', 'c']), stage('prune', ['a', 'b']), { name: 'cse', skipped: true }, stage('dce', ['a'])], selected: 3 }
  };
  const view = new ViewModel({});
  view.setDocument(doc);
  assert.equal(view.stageName, 'dce');
  assert.equal(view.isLastStage(), true);
  assert.equal(view.selectStage('cse'), false); // skipped: nothing to draw
  assert.equal(view.selectStage(3), false); // shown already
  assert.equal(view.selectStage('prune'), true);
  assert.equal(view.doc.nodes.length, 2);
  assert.equal(view.isLastStage(), false);
  view.setDocument(doc);
  assert.equal(view.stageName, 'prune');
  view.setDocument({ ...doc, compiler: { ...doc.compiler, stages: doc.compiler.stages.filter(s => s.name !== 'prune') } });
  assert.equal(view.stageName, 'dce'); // the picked stage is gone: the selected one
});
