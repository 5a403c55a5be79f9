/**
 * Drawing the layout's scope clusters and edges with d3 data joins: what enters fades in,
 * what moves is animated to its new place, what leaves fades out. An edge carrying a
 * gradient is coloured and thickened by the norm's place on the log scale; the edge into
 * the node running now is highlighted.
 */
import { Selection } from 'd3-selection';
import { curveBasis, line } from 'd3-shape';
import 'd3-transition';

import { GraphCanvas } from './canvas';
import { Box, Cluster, LaidEdge, Layout, Point } from './layout';
import { GraphDocument } from './schema';
import { StepState, Timeline } from './state';
import { gradColour } from './svg-style';

/** Everything one frame of the drawing reads. */
export interface DrawContext {
  canvas: GraphCanvas;
  layout: Layout;
  doc: GraphDocument;
  timeline: Timeline;
  state: StepState;
  /** Steps applied. */
  step: number;
  /** The search text (lower case) and the ids of the nodes it matches. */
  query: string;
  matches: ReadonlySet<string>;
  /** Milliseconds of this frame's transitions. */
  duration: number;
  events: DrawEvents;
}

/** What the learner does to the drawing; the renderer decides what it means. */
export interface DrawEvents {
  clusterClick(cluster: Cluster): void;
  boxEnter(event: MouseEvent, box: Box): void;
  boxMove(event: MouseEvent): void;
  boxLeave(): void;
  boxClick(event: MouseEvent, box: Box): void;
}

/**
 * Fade out and remove the elements that left the drawing. Dropping their classes (for
 * 'kg-exiting') first keeps them out of the next data join and of the test hooks while they
 * fade.
 */
export function fadeOut(
  exit: Selection<SVGGElement, any, any, any>,
  duration: number,
  ...classes: string[]
): void {
  for (const c of classes) {
    exit.classed(c, false);
  }
  exit.classed('kg-exiting', true).transition('fade').duration(duration).style('opacity', 0).remove();
}

/** Whether any node of `box` has been built at this step. */
export function boxVisible(ctx: DrawContext, box: Box): boolean {
  const visible = ctx.state.visible;
  return visible === null || box.members.some(id => visible.has(id));
}

function edgeVisible(ctx: DrawContext, edge: LaidEdge): boolean {
  const visible = ctx.state.visible;
  if (visible === null) {
    return true;
  }
  return edge.members.some(i => {
    const e = ctx.doc.edges[i];
    return visible.has(e.source) && visible.has(e.target);
  });
}

/** The expanded scopes around their visible nodes; a fused group's cluster names its kernel. */
export function drawClusters(ctx: DrawContext, moved: boolean): void {
  const { layout, doc, duration: dur } = ctx;
  const shown = new Set<string>();
  for (const b of layout.boxes) {
    if (b.type === 'node' && b.scope !== '' && !shown.has(b.scope) && boxVisible(ctx, b)) {
      shown.add(b.scope);
    }
  }
  const data = layout.clusters.filter(c => shown.has(c.scope));
  const sel = ctx.canvas.clusterLayer
    .selectAll<SVGGElement, Cluster>('g.kg-cluster:not(.kg-exiting)')
    .data(data, d => d.scope);
  fadeOut(sel.exit(), dur, 'kg-cluster');
  const enter = sel
    .enter()
    .append('g')
    .attr('class', 'kg-cluster')
    .attr('data-scope', d => d.scope)
    .style('opacity', 0);
  enter.append('rect').attr('class', 'kg-cluster-box').attr('rx', 8);
  enter.append('text').attr('class', 'kg-cluster-label');
  const events = ctx.events;
  enter.on('click', (event: MouseEvent, d: Cluster) => {
    event.stopPropagation();
    events.clusterClick(d);
  });
  enter.append('title');
  const all = enter.merge(sel);
  all.classed('kg-fused-group', d => doc.groups.has(d.scope));
  all.each((d, i, nodes) => {
    const group = doc.groups.get(d.scope);
    if (group) {
      nodes[i].setAttribute('data-group', group.id);
    } else {
      nodes[i].removeAttribute('data-group');
    }
  });
  all
    .select<SVGTitleElement>('title')
    .text(d => (doc.groups.has(d.scope) ? 'Click to show the generated kernel' : 'Click to collapse this scope'));
  all.select<SVGTextElement>('text.kg-cluster-label').text(d => {
    const group = doc.groups.get(d.scope);
    return group
      ? `\u26a1 ${group.kernel}: ${group.name} (${d.count} ops in one loop)`
      : `\u25be ${d.scope} (${d.count})`;
  });
  const place = (s: any): void => {
    s.select('rect.kg-cluster-box')
      .attr('x', (d: Cluster) => d.x - d.width / 2)
      .attr('y', (d: Cluster) => d.y - d.height / 2)
      .attr('width', (d: Cluster) => d.width)
      .attr('height', (d: Cluster) => d.height);
    s.select('text.kg-cluster-label')
      .attr('x', (d: Cluster) => d.x - d.width / 2 + 8)
      .attr('y', (d: Cluster) => d.y - d.height / 2 + 14);
  };
  place(enter);
  if (moved) {
    place(sel.transition('move').duration(dur));
  }
  enter.transition('fade').duration(dur).style('opacity', 1);
}

function edgePath(points: Point[]): string {
  return line<Point>()
    .x(p => p.x)
    .y(p => p.y)
    .curve(curveBasis)(points) ?? '';
}

/** The edges between visible nodes, coloured by the gradient they carry at this step. */
export function drawEdges(ctx: DrawContext, moved: boolean): void {
  const { layout, state: st, canvas, timeline, duration: dur } = ctx;
  const data = layout.edges.filter(e => edgeVisible(ctx, e));
  const activeBox = st.active ? layout.boxOfNode.get(st.active) : undefined;
  const sel = canvas.edgeLayer
    .selectAll<SVGGElement, LaidEdge>('g.kg-edge:not(.kg-exiting)')
    .data(data, d => d.key);
  fadeOut(sel.exit(), dur, 'kg-edge');
  const enter = sel.enter().append('g').attr('class', 'kg-edge').style('opacity', 0);
  enter.append('path').attr('class', 'kg-edge-path');
  enter.append('text').attr('class', 'kg-edge-label').attr('dy', '0.35em');
  enter.each((d, i, nodes) => {
    const g = nodes[i];
    const src = layout.boxById.get(d.source)!;
    const dst = layout.boxById.get(d.target)!;
    g.setAttribute(src.type === 'node' ? 'data-source' : 'data-source-scope', src.type === 'node' ? src.node!.id : src.scope);
    g.setAttribute(dst.type === 'node' ? 'data-target' : 'data-target-scope', dst.type === 'node' ? dst.node!.id : dst.scope);
  });
  enter.select('path').attr('d', d => edgePath(d.points));
  enter
    .select<SVGTextElement>('text')
    .attr('x', d => d.labelX)
    .attr('y', d => d.labelY);
  enter.transition('fade').duration(dur).style('opacity', 1);
  if (moved) {
    sel.select('path').transition('move').duration(dur).attr('d', d => edgePath(d.points));
    sel
      .select('text')
      .transition('move')
      .duration(dur)
      .attr('x', d => d.labelX)
      .attr('y', d => d.labelY);
  }
  const all = enter.merge(sel);
  all.select<SVGTextElement>('text.kg-edge-label').text(d => d.label);
  all.each((d, i, nodes) => {
    const g = nodes[i];
    // Gradient flow: the largest norm among the merged edges.
    let coloured = false;
    let norm: number | null = null;
    for (const m of d.members) {
      if (st.edgeNorms.has(m)) {
        const v = st.edgeNorms.get(m)!;
        if (!coloured || (v !== null && (norm === null || v > norm))) {
          norm = v;
        }
        coloured = true;
      }
    }
    const active = activeBox !== undefined && d.target === activeBox && !coloured;
    const sig = `${coloured}|${norm}|${active}`;
    if ((g as any).__kgsig === sig) {
      return;
    }
    (g as any).__kgsig = sig;
    const path = g.querySelector('path') as SVGPathElement;
    g.classList.toggle('kg-grad-edge', coloured);
    g.classList.toggle('kg-edge-active', active);
    if (coloured) {
      const pos = timeline.normPosition(norm);
      g.setAttribute('data-grad-norm', String(norm));
      path.style.stroke = gradColour(pos);
      path.style.strokeWidth = `${1.5 + 2.5 * Math.max(0, Math.min(1, pos ?? 0.5))}px`;
      path.setAttribute('marker-end', canvas.arrow('-grad'));
    } else {
      g.removeAttribute('data-grad-norm');
      path.style.stroke = '';
      path.style.strokeWidth = '';
      path.setAttribute('marker-end', canvas.arrow(active ? '-active' : ''));
    }
  });
}
