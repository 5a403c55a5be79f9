/**
 * The graph document of kernelgraph/widgets/SCHEMA.md, read defensively.
 *
 * The document comes from a kernel or from a saved notebook (which anyone may
 * have edited), so nothing in it is trusted: every field is coerced to the type
 * the renderer needs, and every string stays data (the renderer only ever puts
 * it into text nodes and attribute values, never into HTML).
 */

/** The MIME type of the document. */
export const MIME_TYPE = 'application/vnd.kernelgraph.graph+json';

/** The newest document version this renderer knows. */
export const SCHEMA_VERSION = 1;

/** Node kinds that have their own colour; others are drawn like `op`. */
export const KINDS = ['input', 'variable', 'const', 'leaf', 'op', 'gradient'] as const;

/** Kinds whose gradient is drawn under the node during `backward`. */
export const GRAD_KINDS = new Set(['leaf', 'variable', 'input']);

export interface GraphNode {
  id: string;
  name: string;
  label: string;
  op: string;
  kind: string;
  /** Full name scope ("" at top level). */
  scope: string;
  /** First component of `scope`: the unit that collapses ("" for none). */
  topScope: string;
  shape: string;
  dtype: string;
  /** Where the node runs: "cpu", "cuda:0", "worker:1/cuda:0". */
  device: string;
  location: string;
  value: string | null;
  grad: string | null;
  /** Position in `nodes`. */
  index: number;
}

export interface GraphEdge {
  source: string;
  target: string;
  label: string;
  /** Position in `edges` (after dropping edges with unknown ends). */
  index: number;
}

export interface GraphStep {
  phase: string;
  /** Node id; may name no node (the step then highlights nothing). */
  node: string;
  value: string | null;
  grad: string | null;
  gradNorm: number | null;
  seconds: number | null;
}

export interface GraphDocument {
  version: number;
  title: string;
  mode: string;
  nodes: GraphNode[];
  edges: GraphEdge[];
  steps: GraphStep[];
  byId: Map<string, GraphNode>;
}

/** Any JSON value as display text ("" for null/undefined). */
export function asText(value: unknown): string {
  if (value === null || value === undefined) {
    return '';
  }
  if (typeof value === 'string') {
    return value;
  }
  if (typeof value === 'number' || typeof value === 'boolean' || typeof value === 'bigint') {
    return String(value);
  }
  try {
    return JSON.stringify(value) ?? '';
  } catch {
    return String(value);
  }
}

function asOptionalText(value: unknown): string | null {
  return value === null || value === undefined ? null : asText(value);
}

function asNumber(value: unknown): number | null {
  if (typeof value === 'number' && !Number.isNaN(value)) {
    return value;
  }
  if (typeof value === 'string' && value.trim() !== '') {
    // Python's json writes inf/nan as Infinity/NaN, which JSON.parse rejects;
    // a producer may send them as strings instead.
    const n = Number(value);
    return Number.isNaN(n) ? null : n;
  }
  return null;
}

function asArray(value: unknown): unknown[] {
  return Array.isArray(value) ? value : [];
}

function asRecord(value: unknown): Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value)
    ? (value as Record<string, unknown>)
    : {};
}

/**
 * Normalize a raw document (any JSON value, or a JSON string) into a
 * `GraphDocument`. Never throws: a malformed document becomes an empty graph.
 */
export function normalizeDocument(raw: unknown): GraphDocument {
  if (typeof raw === 'string') {
    try {
      raw = JSON.parse(raw);
    } catch {
      raw = {};
    }
  }
  const doc = asRecord(raw);
  const nodes: GraphNode[] = [];
  const byId = new Map<string, GraphNode>();
  for (const item of asArray(doc.nodes)) {
    const n = asRecord(item);
    const id = asText(n.id);
    if (id === '' || byId.has(id)) {
      continue;
    }
    const name = asText(n.name) || id;
    const scope = asText(n.scope);
    const node: GraphNode = {
      id,
      name,
      label: asText(n.label) || name.split('/').pop() || id,
      op: asText(n.op),
      kind: asText(n.kind) || 'op',
      scope,
      topScope: scope.split('/')[0],
      shape: asText(n.shape),
      dtype: asText(n.dtype),
      device: asText(n.device) || 'cpu',
      location: asText(n.location),
      value: asOptionalText(n.value),
      grad: asOptionalText(n.grad),
      index: nodes.length
    };
    nodes.push(node);
    byId.set(id, node);
  }
  const edges: GraphEdge[] = [];
  for (const item of asArray(doc.edges)) {
    const e = asRecord(item);
    const source = asText(e.source);
    const target = asText(e.target);
    if (!byId.has(source) || !byId.has(target)) {
      continue;
    }
    edges.push({ source, target, label: asText(e.label), index: edges.length });
  }
  // Steps keep their positions (the widget's `step` counts them), even when
  // they name an unknown node.
  const steps: GraphStep[] = asArray(doc.steps).map(item => {
    const s = asRecord(item);
    return {
      phase: asText(s.phase),
      node: asText(s.node),
      value: asOptionalText(s.value),
      grad: asOptionalText(s.grad),
      gradNorm: asNumber(s.grad_norm),
      seconds: asNumber(s.seconds)
    };
  });
  const version = asNumber(doc.version);
  return {
    version: version === null ? SCHEMA_VERSION : version,
    title: asText(doc.title),
    mode: asText(doc.mode),
    nodes,
    edges,
    steps,
    byId
  };
}
