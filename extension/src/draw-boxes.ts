/**
 * Drawing the layout's boxes (one per node, or per collapsed scope) with a d3 data join,
 * and keeping each box's texts and highlight classes in step with the state shown: the
 * value and gradient at this step, the node running now, search matches, compiler marks
 * and what a step-through run has executed. A box is touched only when what it shows changed.
 */
import 'd3-transition';

import { fitText, SVG_NS } from './dom';
import { boxVisible, DrawContext, fadeOut } from './draw-links';
import { Box } from './layout';
import { GRAD_KINDS } from './schema';
import { CHAR_WIDTH } from './style';

/** The visible boxes: entering ones fade in from just above, moved ones slide. */
export function drawBoxes(ctx: DrawContext, moved: boolean): void {
  const { layout, duration: dur, events } = ctx;
  const data = layout.boxes.filter(b => boxVisible(ctx, b));
  const sel = ctx.canvas.nodeLayer
    .selectAll<SVGGElement, Box>('g.kg-item:not(.kg-exiting)')
    .data(data, d => d.id);
  fadeOut(sel.exit().on('mouseenter', null), dur, 'kg-node', 'kg-scope');

  const enter = sel
    .enter()
    .append('g')
    .attr('class', d => `kg-item ${d.type === 'node' ? 'kg-node' : 'kg-scope'}`)
    .attr('transform', d => `translate(${d.x},${d.y - 8})`)
    .style('opacity', 0);
  enter.each((d, i, nodes) => {
    const g = nodes[i];
    if (d.type === 'node') {
      const node = d.node!;
      g.setAttribute('data-id', node.id);
      g.setAttribute('data-name', node.name);
      g.setAttribute('data-kind', node.kind);
      g.setAttribute('data-op', node.op);
      g.setAttribute('data-device', node.device);
    } else {
      g.setAttribute('data-scope', d.scope);
      g.setAttribute('data-count', String(d.members.length));
    }
  });
  enter
    .append('rect')
    .attr('class', 'kg-box')
    .attr('rx', d => (d.type === 'scope' ? 10 : 6))
    .attr('x', d => -d.width / 2)
    .attr('y', d => -d.height / 2)
    .attr('width', d => d.width)
    .attr('height', d => d.height);
  enter
    .append('text')
    .attr('class', 'kg-label')
    .attr('y', d => -d.height / 2 + 17);
  enter
    .append('text')
    .attr('class', 'kg-value')
    .attr('y', d => -d.height / 2 + 32);
  enter
    .filter(d => d.type === 'scope')
    .append('text')
    .attr('class', 'kg-toggle')
    .attr('x', d => d.width / 2 - 11)
    .attr('y', d => -d.height / 2 + 16)
    .text('+');
  enter
    .on('mouseenter', (event: MouseEvent, d: Box) => events.boxEnter(event, d))
    .on('mousemove', (event: MouseEvent) => events.boxMove(event))
    .on('mouseleave', () => events.boxLeave())
    .on('click', (event: MouseEvent, d: Box) => events.boxClick(event, d));
  enter
    .transition('fade')
    .duration(dur)
    .style('opacity', 1)
    .attr('transform', d => `translate(${d.x},${d.y})`);
  if (moved) {
    sel
      .transition('move')
      .duration(dur)
      .attr('transform', d => `translate(${d.x},${d.y})`);
  }
  enter.merge(sel).each((d, i, nodes) => updateBox(ctx, nodes[i], d));
}

/** Texts and highlight classes of one box, touched only when they change. */
function updateBox(ctx: DrawContext, g: SVGGElement, box: Box): void {
  const { state: st, doc } = ctx;
  const searching = ctx.query !== '';
  let active = false;
  let match = false;
  let value = '';
  let grad: string | null = null;
  let label: string;
  let node = box.node;
  let flags = '';
  const chars = Math.floor((box.width - 12) / 6.4);
  if (box.type === 'node') {
    // The same id can be a different node in another compiler stage (a folded `mul` is a
    // constant afterwards): read the node from the document drawn now.
    node = doc.byId.get(box.node!.id) ?? box.node!;
    box.node = node;
    const stepper = doc.stepper;
    if (stepper) {
      const atEnd = ctx.step >= ctx.timeline.length;
      flags += st.executed.has(node.id) ? 'e' : '';
      flags += atEnd && stepper.next === node.id ? 'n' : '';
      flags += atEnd && stepper.errorNode === node.id ? 'f' : '';
    }
    active = st.active === node.id;
    match = ctx.matches.has(node.id);
    label = fitText(node.label, Math.floor((box.width - 12) / CHAR_WIDTH));
    value = fitText(st.values.get(node.id) ?? '', chars);
    if (GRAD_KINDS.has(node.kind) && st.grads.has(node.id)) {
      grad = fitText(st.grads.get(node.id)!, chars);
    }
  } else {
    active = st.active !== null && box.members.includes(st.active);
    match = searching && box.members.some(id => ctx.matches.has(id));
    label = fitText(box.scope, Math.floor((box.width - 34) / CHAR_WIDTH));
    const shown = st.visible === null ? box.members.length : box.members.filter(id => st.visible!.has(id)).length;
    value = `${shown} node${shown === 1 ? '' : 's'}`;
  }
  const phase = active ? st.phase : '';
  const attrs = node ? [node.name, node.kind, node.op, node.device, node.mark].join('\u0001') : '';
  const sig = [active, phase, match, searching, label, value, grad, flags, attrs, box.width, box.height].join('\u0000');
  if ((g as any).__kgsig === sig) {
    return;
  }
  (g as any).__kgsig = sig;
  if (node) {
    g.setAttribute('data-name', node.name);
    g.setAttribute('data-kind', node.kind);
    g.setAttribute('data-op', node.op);
    g.setAttribute('data-device', node.device);
    if (node.mark) {
      g.setAttribute('data-mark', node.mark);
    } else {
      g.removeAttribute('data-mark');
    }
    g.classList.toggle('kg-executed', flags.includes('e'));
    g.classList.toggle('kg-next', flags.includes('n'));
    g.classList.toggle('kg-failed', flags.includes('f'));
    const rect = g.querySelector('rect.kg-box');
    rect?.setAttribute('x', String(-box.width / 2));
    rect?.setAttribute('y', String(-box.height / 2));
    rect?.setAttribute('width', String(box.width));
    rect?.setAttribute('height', String(box.height));
  }
  g.classList.toggle('kg-active', active);
  g.classList.toggle('kg-match', match);
  g.classList.toggle('kg-dim', searching && !match);
  if (phase) {
    g.setAttribute('data-phase', phase);
  } else {
    g.removeAttribute('data-phase');
  }
  (g.querySelector('text.kg-label') as SVGTextElement).textContent = label;
  (g.querySelector('text.kg-value') as SVGTextElement).textContent = value;
  let gradEl = g.querySelector('text.kg-grad') as SVGTextElement | null;
  if (grad !== null) {
    if (!gradEl) {
      gradEl = document.createElementNS(SVG_NS, 'text');
      gradEl.setAttribute('class', 'kg-grad');
      gradEl.setAttribute('y', String(-box.height / 2 + 47));
      g.appendChild(gradEl);
    }
    gradEl.textContent = grad;
  } else if (gradEl) {
    gradEl.remove();
  }
  if (active) {
    g.parentNode?.appendChild(g); // draw the highlighted box on top
  }
}
