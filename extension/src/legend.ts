/**
 * The legend above and below the drawing: a chip per node kind, compiler mark, step-through
 * state and device present, and the colour scale of gradient norms. The chips' colours come
 * from the shared style (./style) through one small stylesheet added to the page.
 */
import { h, shortNumber } from './dom';
import { GraphDocument, KINDS } from './schema';
import { DEVICE_STROKE, KIND_COLOURS, MARK_COLOURS } from './style';
import { gradRamp } from './svg-style';

/** What each compiler mark means (legend chips and tooltips). */
export const MARK_TEXT: Record<string, string> = {
  folded: 'folded to a constant',
  merged: 'merged (computes a duplicate too)',
  simplified: 'stands for a simplified node',
  fused: 'inside a fused kernel',
  removed: 'removed by this pass'
};

/** The chips' colours (their sizes and borders are in style/base.css). */
function legendCss(): string {
  const rules = KINDS.map(
    kind =>
      `.kg-legend-item[data-kind='${kind}'] .kg-swatch { background: ${KIND_COLOURS[kind].fill}; border-color: ${KIND_COLOURS[kind].stroke}; }`
  );
  for (const [mark, c] of Object.entries(MARK_COLOURS)) {
    const fill = c.fill ? ` background: ${c.fill};` : '';
    rules.push(`.kg-legend-mark[data-mark='${mark}'] .kg-swatch { border-color: ${c.stroke};${fill} }`);
  }
  rules.push(`.kg-legend-device .kg-swatch { border-color: ${DEVICE_STROKE}; }`);
  return rules.join('\n');
}

/** Add the chips' stylesheet to the page that holds `el`, once. */
export function addLegendStyle(el: HTMLElement): void {
  const head = el.ownerDocument.head;
  if (head && !head.querySelector('style[data-kg-legend]')) {
    const style = el.ownerDocument.createElement('style');
    style.setAttribute('data-kg-legend', '');
    style.textContent = legendCss();
    head.appendChild(style);
  }
}

function chip(className: string, text: string): HTMLElement {
  const item = h('span', className);
  item.append(h('span', 'kg-swatch'), document.createTextNode(text));
  return item;
}

/** Fill `el` with a chip per kind, mark, step-through state and non-CPU device of `doc`. */
export function updateLegend(el: HTMLElement, doc: GraphDocument, stepThrough: boolean): void {
  el.replaceChildren();
  for (const kind of new Set(doc.nodes.map(n => n.kind))) {
    const item = chip('kg-legend-item', kind);
    item.setAttribute('data-kind', kind);
    el.appendChild(item);
  }
  // Compiler marks: a chip per mark present in the stage shown.
  for (const mark of new Set(doc.nodes.map(n => n.mark).filter(m => m !== ''))) {
    const item = chip('kg-legend-item kg-legend-mark', mark);
    item.setAttribute('data-mark', mark);
    item.title = MARK_TEXT[mark] ?? mark;
    el.appendChild(item);
  }
  // Step-through: what the green and the dashed outline mean.
  if (stepThrough) {
    for (const [cls, text] of [
      ['kg-legend-ran', 'has run'],
      ['kg-legend-next', 'runs next']
    ]) {
      el.appendChild(chip(`kg-legend-item ${cls}`, text));
    }
  }
  // Placement: a chip per non-CPU device, matching the thick outline of its nodes.
  for (const device of new Set(doc.nodes.map(n => n.device).filter(d => d !== 'cpu'))) {
    const item = chip('kg-legend-item kg-legend-device', device);
    item.setAttribute('data-device', device);
    el.appendChild(item);
  }
}

/** The gradient colour scale over `range` (log10 of the norms), hidden without one. */
export function updateGradLegend(el: HTMLElement, range: [number, number] | null): void {
  el.replaceChildren();
  el.style.display = range ? '' : 'none';
  if (range) {
    const bar = h('span', 'kg-grad-bar');
    const stops = [0, 0.25, 0.5, 0.75, 1].map(t => gradRamp(t)).join(', ');
    bar.style.background = `linear-gradient(to right, ${stops})`;
    el.append(
      h('span', 'kg-grad-title', 'gradient norm (log scale)'),
      h('span', 'kg-grad-min', shortNumber(10 ** range[0])),
      bar,
      h('span', 'kg-grad-max', shortNumber(10 ** range[1]))
    );
  }
}
