/**
 * What the drawing shows after the first `step` steps of a document's animation.
 *
 * Pure functions over the document (no DOM), so a node test can check them.
 * The state is recomputed from the start for every step: O(steps) per frame,
 * which is nothing next to drawing, and scrubbing is exact in both directions.
 */
import { GraphDocument } from './schema';

/** Per-document facts the state computation needs, computed once. */
export class Timeline {
  readonly doc: GraphDocument;
  /** Index of each node's first `build` step. */
  readonly buildAt = new Map<string, number>();
  /** Nodes that some `forward` step shows a value for. */
  readonly hasForward = new Set<string>();
  /** Nodes that some `backward` step gives a gradient. */
  readonly hasBackward = new Set<string>();
  /** Index of the last `backward` step (-1 if none). */
  readonly lastBackward: number = -1;
  /** Edge indices into each node. */
  readonly incoming = new Map<string, number[]>();
  /** log10 range of the positive finite `grad_norm`s (null if none). */
  readonly logNormRange: [number, number] | null = null;

  constructor(doc: GraphDocument) {
    this.doc = doc;
    let lo = Infinity;
    let hi = -Infinity;
    let lastBackward = -1;
    doc.steps.forEach((s, i) => {
      if (!doc.byId.has(s.node)) {
        return;
      }
      if (s.phase === 'build') {
        if (!this.buildAt.has(s.node)) {
          this.buildAt.set(s.node, i);
        }
      } else if (s.phase === 'forward') {
        if (s.value !== null) {
          this.hasForward.add(s.node);
        }
      } else if (s.phase === 'backward') {
        if (s.grad !== null) {
          this.hasBackward.add(s.node);
        }
        lastBackward = i;
        const g = s.gradNorm;
        if (g !== null && g > 0 && Number.isFinite(g)) {
          const l = Math.log10(g);
          lo = Math.min(lo, l);
          hi = Math.max(hi, l);
        }
      }
    });
    this.lastBackward = lastBackward;
    if (lo <= hi) {
      this.logNormRange = [lo, hi];
    }
    for (const e of doc.edges) {
      let list = this.incoming.get(e.target);
      if (!list) {
        list = [];
        this.incoming.set(e.target, list);
      }
      list.push(e.index);
    }
  }

  get length(): number {
    return this.doc.steps.length;
  }

  /** Whether `build` steps decide which nodes exist. */
  get hasBuild(): boolean {
    return this.buildAt.size > 0;
  }

  /**
   * Position of `gradNorm` on the document's log scale, in [0, 1];
   * null for a missing norm, -1 for zero, 2 for a non-finite norm.
   */
  normPosition(gradNorm: number | null): number | null {
    if (gradNorm === null) {
      return null;
    }
    if (!Number.isFinite(gradNorm)) {
      return 2;
    }
    if (gradNorm <= 0) {
      return -1;
    }
    const range = this.logNormRange;
    if (!range || range[1] - range[0] < 1e-12) {
      return 1;
    }
    const t = (Math.log10(gradNorm) - range[0]) / (range[1] - range[0]);
    return Math.min(1, Math.max(0, t));
  }
}

export interface StepState {
  /** Number of steps applied, 0..length. */
  step: number;
  /** Nodes present; null means all of them. */
  visible: Set<string> | null;
  /** Node of the last applied step (null at step 0 or if it names no node). */
  active: string | null;
  /** Phase of the last applied step ("" at step 0). */
  phase: string;
  /** Seconds of the last applied `forward` step, if it is the last step. */
  seconds: number | null;
  /** Value text shown per node. */
  values: Map<string, string>;
  /** Gradient text shown per node. */
  grads: Map<string, string>;
  /** grad_norm per coloured edge index (null: a gradient without a norm). */
  edgeNorms: Map<number, number | null>;
  /** Nodes that some applied `forward` step ran (a step-through run marks them). */
  executed: Set<string>;
}

/** The state after applying the first `step` steps (clamped to 0..length). */
export function stateAt(timeline: Timeline, step: number): StepState {
  const doc = timeline.doc;
  const n = timeline.length;
  const s = Math.max(0, Math.min(n, Math.floor(Number.isFinite(step) ? step : n)));

  let visible: Set<string> | null = null;
  if (timeline.hasBuild) {
    visible = new Set();
    for (const node of doc.nodes) {
      const at = timeline.buildAt.get(node.id);
      if (at === undefined || at < s) {
        visible.add(node.id);
      }
    }
  }

  const values = new Map<string, string>();
  const grads = new Map<string, string>();
  const backwardDone = s > timeline.lastBackward;
  for (const node of doc.nodes) {
    if (node.value !== null && !timeline.hasForward.has(node.id)) {
      values.set(node.id, node.value);
    }
    if (node.grad !== null && !timeline.hasBackward.has(node.id) && backwardDone) {
      grads.set(node.id, node.grad);
    }
  }

  const edgeNorms = new Map<number, number | null>();
  const executed = new Set<string>();
  let sawBackward = false;
  for (let i = 0; i < s; i++) {
    const st = doc.steps[i];
    if (!doc.byId.has(st.node)) {
      continue;
    }
    if (st.phase === 'forward') {
      if (sawBackward) {
        // A new forward pass (next training iteration): old gradient flow is stale.
        edgeNorms.clear();
        sawBackward = false;
      }
      if (st.value !== null) {
        values.set(st.node, st.value);
      }
      executed.add(st.node);
    } else if (st.phase === 'backward') {
      sawBackward = true;
      if (st.grad !== null) {
        grads.set(st.node, st.grad);
      }
      for (const e of timeline.incoming.get(st.node) ?? []) {
        edgeNorms.set(e, st.gradNorm);
      }
    }
  }

  const last = s > 0 ? doc.steps[s - 1] : null;
  return {
    step: s,
    visible,
    active: last && doc.byId.has(last.node) ? last.node : null,
    phase: last ? last.phase : '',
    seconds: last && last.phase === 'forward' ? last.seconds : null,
    values,
    grads,
    edgeNorms,
    executed
  };
}
