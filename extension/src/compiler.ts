/**
 * The compiler view's stages as drawable documents (pure, no DOM: a node test checks it).
 *
 * A compiler document (kernelgraph/widgets/SCHEMA.md, `compiler` section) holds one stage
 * per pass. `stageDocument` turns one stage into a plain `GraphDocument` for the one
 * renderer: its nodes carry the stage's marks (folded, merged, simplified, fused, removed)
 * and notes, and the members of each fused group share a cluster key, so the layout draws
 * a box around the ops that one generated kernel computes.
 */
import { CompilerInfo, FusedGroup, GraphDocument, normalizeDocument } from './schema';

/**
 * The cluster key of a fused group's members. It holds a space, which no name scope can
 * (`kg.name_scope` allows letters, digits and `_.-/`), so it never merges with a scope.
 */
export function groupKey(group: FusedGroup): string {
  return `fused kernel ${group.name}`;
}

/** Whether stage `index` has a graph to draw (skipped passes have none). */
export function drawable(compiler: CompilerInfo, index: number): boolean {
  const stage = compiler.stages[index];
  return stage !== undefined && !stage.skipped && stage.rawNodes.length > 0;
}

/** The index of the stage called `name`, if it can be drawn; else null. */
export function stageIndex(compiler: CompilerInfo, name: string): number | null {
  const i = compiler.stages.findIndex(s => s.name === name);
  return i >= 0 && drawable(compiler, i) ? i : null;
}

/** The stage to show first: the one the producer selected, else the last drawable one. */
export function defaultStage(compiler: CompilerInfo): number {
  if (drawable(compiler, compiler.selected)) {
    return compiler.selected;
  }
  for (let i = compiler.stages.length - 1; i >= 0; i--) {
    if (drawable(compiler, i)) {
      return i;
    }
  }
  return -1;
}

/** The document of stage `index` of `doc` (`doc` itself when it has no such stage). */
export function stageDocument(doc: GraphDocument, index: number): GraphDocument {
  const compiler = doc.compiler;
  if (!compiler || !drawable(compiler, index)) {
    return doc;
  }
  const stage = compiler.stages[index];
  const sub = normalizeDocument({
    version: doc.version,
    title: doc.title,
    mode: doc.mode,
    nodes: stage.rawNodes,
    edges: stage.rawEdges,
    steps: []
  });
  sub.compiler = compiler;
  sub.stepper = doc.stepper;
  for (const node of sub.nodes) {
    node.mark = stage.marks.get(node.id) ?? '';
    node.note = stage.notes.get(node.id) ?? '';
  }
  for (const group of stage.groups) {
    const key = groupKey(group);
    let present = false;
    for (const id of group.members) {
      const node = sub.byId.get(id);
      if (node) {
        node.topScope = key;
        present = true;
      }
    }
    if (present) {
      sub.groups.set(key, group);
    }
  }
  return sub;
}

/** Bytes in a short form: 1536 -> "1.5 KiB". */
export function formatBytes(n: number): string {
  const units = ['B', 'KiB', 'MiB', 'GiB'];
  let x = n;
  let u = 0;
  while (Math.abs(x) >= 1024 && u < units.length - 1) {
    x /= 1024;
    u++;
  }
  return `${u === 0 ? String(Math.round(x)) : String(Number(x.toFixed(1)))} ${units[u]}`;
}
