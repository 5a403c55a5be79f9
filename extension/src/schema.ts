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
  /**
   * What a compiler pass did to the node in the stage shown ("folded", "merged",
   * "simplified", "fused", "removed"; "" for nothing), and a sentence about it.
   */
  mark: string;
  note: string;
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

/** A fused group: the member ops one generated kernel computes (node ids). */
export interface FusedGroup {
  /** Id of the fused node (its root member has the same id). */
  id: string;
  name: string;
  kernel: string;
  members: string[];
}

/** The graph after one compiler pass (or "as written"); see SCHEMA.md. */
export interface CompilerStage {
  name: string;
  skipped: boolean;
  before: number | null;
  after: number | null;
  seconds: number | null;
  changes: string[];
  /** The stage's own node and edge lists, as sent (normalized when drawn). */
  rawNodes: unknown[];
  rawEdges: unknown[];
  marks: Map<string, string>;
  notes: Map<string, string>;
  groups: FusedGroup[];
  fetches: string[];
  ghostsOmitted: number;
}

export interface KernelInfo {
  id: string;
  name: string;
  kernel: string;
  members: string[];
  source: string;
}

export interface MemoryInfo {
  /** Null when some shape is only known at run time. */
  peakBytes: number | null;
  naiveBytes: number | null;
  buffers: number;
  slots: Map<string, number>;
  inPlace: Set<string>;
}

export interface CompilerInfo {
  stages: CompilerStage[];
  selected: number;
  optimized: boolean;
  skipped: string[];
  compileSeconds: number | null;
  passesSeconds: number | null;
  runSeconds: number | null;
  memory: MemoryInfo | null;
  kernels: KernelInfo[];
  planSource: string;
}

/** Where a step-through run stands (`sess.step(...)`). */
export interface StepperInfo {
  order: string[];
  position: number;
  total: number;
  next: string | null;
  done: boolean;
  error: string | null;
  errorNode: string | null;
  optimized: boolean;
  fetches: string[];
}

export interface GraphDocument {
  version: number;
  title: string;
  mode: string;
  nodes: GraphNode[];
  edges: GraphEdge[];
  steps: GraphStep[];
  byId: Map<string, GraphNode>;
  /** The compiler view's stages (null for a plain graph). */
  compiler: CompilerInfo | null;
  /** The step-through state (null unless the document is a stepper's). */
  stepper: StepperInfo | null;
  /** Fused groups drawn in this document, by the cluster key of their members. */
  groups: Map<string, FusedGroup>;
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
      index: nodes.length,
      mark: '',
      note: ''
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
    byId,
    compiler: doc.compiler === undefined || doc.compiler === null ? null : readCompiler(doc.compiler),
    stepper: doc.stepper === undefined || doc.stepper === null ? null : readStepper(doc.stepper),
    groups: new Map()
  };
}

function asTextList(value: unknown): string[] {
  return asArray(value).map(asText);
}

function asTextMap(value: unknown): Map<string, string> {
  const out = new Map<string, string>();
  for (const [k, v] of Object.entries(asRecord(value))) {
    out.set(k, asText(v));
  }
  return out;
}

function asOptionalId(value: unknown): string | null {
  return value === null || value === undefined || value === '' ? null : asText(value);
}

/** The `compiler` section (see SCHEMA.md), every field coerced. */
export function readCompiler(raw: unknown): CompilerInfo {
  const c = asRecord(raw);
  const stages: CompilerStage[] = asArray(c.stages).map(item => {
    const s = asRecord(item);
    return {
      name: asText(s.name) || '?',
      skipped: s.skipped === true,
      before: asNumber(s.before),
      after: asNumber(s.after),
      seconds: asNumber(s.seconds),
      changes: asTextList(s.changes),
      rawNodes: asArray(s.nodes),
      rawEdges: asArray(s.edges),
      marks: asTextMap(s.marks),
      notes: asTextMap(s.notes),
      groups: asArray(s.groups).map(g => {
        const r = asRecord(g);
        return { id: asText(r.id), name: asText(r.name), kernel: asText(r.kernel), members: asTextList(r.members) };
      }),
      fetches: asTextList(s.fetches),
      ghostsOmitted: asNumber(s.ghosts_omitted) ?? 0
    };
  });
  const selected = asNumber(c.selected);
  const m = c.memory === null || c.memory === undefined ? null : asRecord(c.memory);
  let memory: MemoryInfo | null = null;
  if (m) {
    const slots = new Map<string, number>();
    for (const [k, v] of Object.entries(asRecord(m.slots))) {
      const n = asNumber(v);
      if (n !== null) {
        slots.set(k, n);
      }
    }
    memory = {
      peakBytes: asNumber(m.peak_bytes),
      naiveBytes: asNumber(m.naive_bytes),
      buffers: asNumber(m.buffers) ?? slots.size,
      slots,
      inPlace: new Set(asTextList(m.in_place))
    };
  }
  return {
    stages,
    selected: selected === null ? stages.length - 1 : Math.max(0, Math.min(stages.length - 1, Math.floor(selected))),
    optimized: c.optimized !== false,
    skipped: asTextList(c.skipped),
    compileSeconds: asNumber(c.compile_seconds),
    passesSeconds: asNumber(c.passes_seconds),
    runSeconds: asNumber(c.run_seconds),
    memory,
    kernels: asArray(c.kernels).map(k => {
      const r = asRecord(k);
      return {
        id: asText(r.id),
        name: asText(r.name),
        kernel: asText(r.kernel),
        members: asTextList(r.members),
        source: asText(r.source)
      };
    }),
    planSource: asText(c.plan_source)
  };
}

/** The `stepper` section (see SCHEMA.md), every field coerced. */
export function readStepper(raw: unknown): StepperInfo {
  const s = asRecord(raw);
  return {
    order: asTextList(s.order),
    position: asNumber(s.position) ?? 0,
    total: asNumber(s.total) ?? 0,
    next: asOptionalId(s.next),
    done: s.done === true,
    error: asOptionalId(s.error),
    errorNode: asOptionalId(s.error_node),
    optimized: s.optimized === true,
    fetches: asTextList(s.fetches)
  };
}
