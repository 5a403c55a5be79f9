/**
 * Layered (top-to-bottom) layout of a graph document with dagre.
 *
 * Top-level name scopes can be collapsed: their nodes become one box and their
 * edges to the outside are merged. Expanded scopes are drawn as clusters
 * (dagre compound nodes) around their nodes. Pure (no DOM): a node test times it.
 *
 * The layout covers every node of the document; `build` steps only reveal
 * nodes in place, so playing the build animation never re-runs dagre.
 *
 * dagre is recursive and slow on very large graphs (a 2,000-node chain
 * overflows the stack; 2,000 nodes in clusters take seconds), so above
 * `dagreLimit` boxes, or if dagre fails, a plain iterative layered layout
 * (longest-path ranks, barycentric ordering) is used instead.
 */
import dagre from '@dagrejs/dagre';

import { GRAD_KINDS, GraphDocument, GraphNode } from './schema';
import { CHAR_WIDTH, SPACING } from './style';

export interface Point {
  x: number;
  y: number;
}

/** A drawn box: one node, or a collapsed top-level scope. */
export interface Box {
  /** "n:" + node id, or "s:" + scope name (the prefixes keep the two apart). */
  id: string;
  type: 'node' | 'scope';
  node: GraphNode | null;
  /** Top-level scope of the node, or the collapsed scope. */
  scope: string;
  /** Ids of the document nodes inside (one for a node box). */
  members: string[];
  width: number;
  height: number;
  /** Centre. */
  x: number;
  y: number;
}

/** A drawn edge between two boxes: one document edge or several merged. */
export interface LaidEdge {
  key: string;
  source: string;
  target: string;
  /** Indices of the document edges drawn by this edge. */
  members: number[];
  label: string;
  points: Point[];
  labelX: number;
  labelY: number;
}

/** An expanded top-level scope, drawn around its nodes. */
export interface Cluster {
  scope: string;
  count: number;
  x: number;
  y: number;
  width: number;
  height: number;
}

export interface Layout {
  boxes: Box[];
  boxById: Map<string, Box>;
  /** Document node id -> id of the box that draws it. */
  boxOfNode: Map<string, string>;
  edges: LaidEdge[];
  clusters: Cluster[];
  width: number;
  height: number;
  /** Time the layout engine took, in ms. */
  millis: number;
  /** Which engine laid it out. */
  engine: 'dagre' | 'layered';
}

export interface LayoutOptions {
  /** Reserve room for edge labels in the layout (default: only below `bigGraph` boxes). */
  edgeLabels?: boolean;
  /** Box count from which the faster, plainer settings are used (default 400). */
  bigGraph?: number;
  /** Most boxes laid out by dagre; more use the plain layered layout (default 600). */
  dagreLimit?: number;
}

export const NODE_HEIGHT = 42;
export const GRAD_NODE_HEIGHT = 56;
export { CHAR_WIDTH };
export const EDGE_CHAR_WIDTH = 6;
// Shared with the static SVG fallback (kernelgraph/widgets/style.json).
const NODESEP = SPACING.node;
const RANKSEP = SPACING.rank;
const MARGIN = SPACING.margin;

function clamp(x: number, lo: number, hi: number): number {
  return Math.max(lo, Math.min(hi, x));
}

export function nodeBoxSize(node: GraphNode): { width: number; height: number } {
  return {
    width: clamp(node.label.length * CHAR_WIDTH + 20, 90, 190),
    height: GRAD_KINDS.has(node.kind) ? GRAD_NODE_HEIGHT : NODE_HEIGHT
  };
}

export function scopeBoxSize(scope: string): { width: number; height: number } {
  return { width: clamp(scope.length * CHAR_WIDTH + 44, 110, 210), height: NODE_HEIGHT };
}

/** The top-level scopes of a document and their node ids, in document order. */
export function topScopes(doc: GraphDocument): Map<string, string[]> {
  const scopes = new Map<string, string[]>();
  for (const node of doc.nodes) {
    if (node.topScope === '') {
      continue;
    }
    let list = scopes.get(node.topScope);
    if (!list) {
      list = [];
      scopes.set(node.topScope, list);
    }
    list.push(node.id);
  }
  return scopes;
}

const now = (): number =>
  typeof performance !== 'undefined' ? performance.now() : Date.now();

/** Lay out `doc` with the top-level scopes in `collapsed` drawn as single boxes. */
export function computeLayout(
  doc: GraphDocument,
  collapsed: ReadonlySet<string>,
  options: LayoutOptions = {}
): Layout {
  const boxes: Box[] = [];
  const boxById = new Map<string, Box>();
  const boxOfNode = new Map<string, string>();
  const expanded = new Map<string, number>();

  for (const node of doc.nodes) {
    if (node.topScope !== '' && collapsed.has(node.topScope)) {
      const id = 's:' + node.topScope;
      let box = boxById.get(id);
      if (!box) {
        box = {
          id,
          type: 'scope',
          node: null,
          scope: node.topScope,
          members: [],
          ...scopeBoxSize(node.topScope),
          x: 0,
          y: 0
        };
        boxes.push(box);
        boxById.set(id, box);
      }
      box.members.push(node.id);
      boxOfNode.set(node.id, id);
    } else {
      const box: Box = {
        id: 'n:' + node.id,
        type: 'node',
        node,
        scope: node.topScope,
        members: [node.id],
        ...nodeBoxSize(node),
        x: 0,
        y: 0
      };
      boxes.push(box);
      boxById.set(box.id, box);
      boxOfNode.set(node.id, box.id);
      if (node.topScope !== '') {
        expanded.set(node.topScope, (expanded.get(node.topScope) ?? 0) + 1);
      }
    }
  }

  // Merge document edges that join the same two boxes (and drop the ones
  // inside a collapsed scope).
  const merged = new Map<string, { source: string; target: string; members: number[]; labels: Set<string> }>();
  for (const e of doc.edges) {
    const source = boxOfNode.get(e.source);
    const target = boxOfNode.get(e.target);
    if (source === undefined || target === undefined || source === target) {
      continue;
    }
    const key = source + '\n' + target;
    let m = merged.get(key);
    if (!m) {
      m = { source, target, members: [], labels: new Set() };
      merged.set(key, m);
    }
    m.members.push(e.index);
    m.labels.add(e.label);
  }

  const edges: LaidEdge[] = [];
  for (const [key, m] of merged) {
    const label = edgeLabel(m.labels, m.members.length);
    edges.push({ key, source: m.source, target: m.target, members: m.members, label, points: [], labelX: 0, labelY: 0 });
  }

  const t0 = now();
  let result: { width: number; height: number; clusters: Cluster[] } | null = null;
  let engine: Layout['engine'] = 'dagre';
  if (boxes.length <= (options.dagreLimit ?? 600)) {
    try {
      result = dagreLayout(boxes, boxById, edges, expanded, options);
    } catch (err) {
      // RangeError (deep recursion) on long chains; fall through.
      console.warn('kernelgraph-extension: dagre layout failed, using the plain layered layout', err);
    }
  }
  if (result === null) {
    engine = 'layered';
    result = layeredLayout(boxes, edges, expanded);
  }
  return { boxes, boxById, boxOfNode, edges, ...result, millis: now() - t0, engine };
}

function dagreLayout(
  boxes: Box[],
  boxById: Map<string, Box>,
  edges: LaidEdge[],
  expanded: Map<string, number>,
  options: LayoutOptions
): { width: number; height: number; clusters: Cluster[] } {
  const big = boxes.length >= (options.bigGraph ?? 400);
  const withLabels = options.edgeLabels ?? !big;
  const compound = expanded.size > 0;
  const g = new dagre.graphlib.Graph({ compound, multigraph: false });
  g.setGraph({
    rankdir: 'TB',
    nodesep: NODESEP,
    edgesep: 12,
    ranksep: withLabels ? 34 : RANKSEP,
    marginx: MARGIN,
    marginy: MARGIN,
    // network-simplex gives the tidiest ranks but grows fast with size.
    ranker: big ? 'longest-path' : 'network-simplex'
  });
  g.setDefaultEdgeLabel(() => ({}));
  for (const scope of expanded.keys()) {
    g.setNode('c:' + scope, {});
  }
  for (const box of boxes) {
    g.setNode(box.id, { width: box.width, height: box.height });
    if (compound && box.type === 'node' && expanded.has(box.scope)) {
      g.setParent(box.id, 'c:' + box.scope);
    }
  }
  for (const e of edges) {
    g.setEdge(
      e.source,
      e.target,
      withLabels && e.label !== ''
        ? { width: e.label.length * EDGE_CHAR_WIDTH + 6, height: 14, labelpos: 'c' }
        : {}
    );
  }

  dagre.layout(g);

  for (const box of boxes) {
    const n = g.node(box.id);
    box.x = n.x ?? 0;
    box.y = n.y ?? 0;
  }
  for (const e of edges) {
    const label = g.edge(e.source, e.target);
    const points = (label.points ?? []).filter(
      (p: Point) => Number.isFinite(p.x) && Number.isFinite(p.y)
    );
    e.points = points.length >= 2 ? points : straight(boxById.get(e.source)!, boxById.get(e.target)!);
    if (typeof label.x === 'number' && typeof label.y === 'number' && withLabels && e.label !== '') {
      e.labelX = label.x;
      e.labelY = label.y;
    } else {
      const mid = e.points[Math.floor(e.points.length / 2)];
      e.labelX = mid.x;
      e.labelY = mid.y;
    }
  }
  const clusters: Cluster[] = [];
  for (const [scope, count] of expanded) {
    const n = g.node('c:' + scope);
    clusters.push({
      scope,
      count,
      x: n.x ?? 0,
      y: n.y ?? 0,
      width: n.width ?? 0,
      height: n.height ?? 0
    });
  }
  const graph = g.graph();
  return { width: graph.width ?? 0, height: graph.height ?? 0, clusters };
}

/**
 * A plain layered layout in O(boxes + edges) per sweep, with no recursion:
 * ranks by longest path from the sources (cycles broken in document order),
 * order in each rank by a few barycenter sweeps, x packed left to right
 * towards each box's parents, straight edges.
 */
export function layeredLayout(
  boxes: Box[],
  edges: LaidEdge[],
  expanded: Map<string, number>
): { width: number; height: number; clusters: Cluster[] } {
  const n = boxes.length;
  const index = new Map<string, number>();
  boxes.forEach((b, i) => index.set(b.id, i));
  const outs: number[][] = boxes.map(() => []);
  const ins: number[][] = boxes.map(() => []);
  for (const e of edges) {
    const s = index.get(e.source)!;
    const t = index.get(e.target)!;
    outs[s].push(t);
    ins[t].push(s);
  }

  // Ranks (Kahn's algorithm; a node on a cycle is forced in document order).
  const indegree = ins.map(list => list.length);
  const rank = new Array<number>(n).fill(0);
  const done = new Array<boolean>(n).fill(false);
  const queue: number[] = [];
  for (let v = 0; v < n; v++) {
    if (indegree[v] === 0) {
      queue.push(v);
    }
  }
  let head = 0;
  let next = 0;
  let processed = 0;
  while (processed < n) {
    if (head === queue.length) {
      while (done[next]) {
        next++;
      }
      queue.push(next);
    }
    const v = queue[head++];
    if (done[v]) {
      continue;
    }
    done[v] = true;
    processed++;
    for (const w of outs[v]) {
      if (!done[w]) {
        rank[w] = Math.max(rank[w], rank[v] + 1);
        if (--indegree[w] === 0) {
          queue.push(w);
        }
      }
    }
  }

  const maxRank = n === 0 ? -1 : Math.max(...rank);
  const layers: number[][] = Array.from({ length: maxRank + 1 }, () => []);
  for (let v = 0; v < n; v++) {
    layers[rank[v]].push(v);
  }

  // Order: barycenter sweeps down and up.
  const pos = new Array<number>(n).fill(0);
  const setPositions = (layer: number[]): void => layer.forEach((v, i) => (pos[v] = i));
  layers.forEach(setPositions);
  const sweep = (layer: number[], neighbours: number[][]): void => {
    const key = new Map<number, number>();
    for (const v of layer) {
      const list = neighbours[v];
      key.set(v, list.length ? list.reduce((a, u) => a + pos[u], 0) / list.length : pos[v]);
    }
    layer.sort((a, b) => key.get(a)! - key.get(b)! || a - b);
    setPositions(layer);
  };
  for (let iter = 0; iter < 4; iter++) {
    for (let r = 1; r <= maxRank; r++) {
      sweep(layers[r], ins);
    }
    for (let r = maxRank - 1; r >= 0; r--) {
      sweep(layers[r], outs);
    }
  }

  // Coordinates.
  let top = MARGIN;
  for (const layer of layers) {
    const height = Math.max(...layer.map(v => boxes[v].height));
    let left = -Infinity;
    for (const v of layer) {
      const box = boxes[v];
      const parents = ins[v].filter(u => rank[u] < rank[v]);
      const want = parents.length
        ? parents.reduce((a, u) => a + boxes[u].x, 0) / parents.length
        : left === -Infinity
          ? 0
          : left + NODESEP + box.width / 2;
      box.x = left === -Infinity ? want : Math.max(want, left + NODESEP + box.width / 2);
      box.y = top + height / 2;
      left = box.x + box.width / 2;
    }
    top += height + RANKSEP;
  }
  let minX = Infinity;
  let maxX = -Infinity;
  for (const box of boxes) {
    minX = Math.min(minX, box.x - box.width / 2);
    maxX = Math.max(maxX, box.x + box.width / 2);
  }
  const shift = n === 0 ? 0 : MARGIN - minX;
  for (const box of boxes) {
    box.x += shift;
  }
  for (const e of edges) {
    const a = boxes[index.get(e.source)!];
    const b = boxes[index.get(e.target)!];
    e.points = straight(a, b);
    e.labelX = (e.points[0].x + e.points[1].x) / 2;
    e.labelY = (e.points[0].y + e.points[1].y) / 2;
  }

  const clusters: Cluster[] = [];
  for (const [scope, count] of expanded) {
    let x0 = Infinity;
    let y0 = Infinity;
    let x1 = -Infinity;
    let y1 = -Infinity;
    for (const box of boxes) {
      if (box.type === 'node' && box.scope === scope) {
        x0 = Math.min(x0, box.x - box.width / 2 - 10);
        x1 = Math.max(x1, box.x + box.width / 2 + 10);
        y0 = Math.min(y0, box.y - box.height / 2 - 22);
        y1 = Math.max(y1, box.y + box.height / 2 + 10);
      }
    }
    clusters.push({ scope, count, x: (x0 + x1) / 2, y: (y0 + y1) / 2, width: x1 - x0, height: y1 - y0 });
  }
  return {
    width: n === 0 ? 0 : maxX - minX + 2 * MARGIN,
    height: n === 0 ? 0 : top - RANKSEP + MARGIN,
    clusters
  };
}

function straight(a: Box, b: Box): Point[] {
  return [
    { x: a.x, y: a.y + a.height / 2 },
    { x: b.x, y: b.y - b.height / 2 }
  ];
}

function edgeLabel(labels: Set<string>, count: number): string {
  if (labels.size === 1) {
    const [only] = labels;
    if (count === 1 || only === '') {
      return only;
    }
    return `${only} \u00d7${count}`;
  }
  return `${count} tensors`;
}
