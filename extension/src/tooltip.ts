/**
 * The tooltip of a box under the pointer: a node's name, op, kind, shape, dtype, device,
 * source location, value and gradient at the step shown (and what the compiler or the
 * step-through did to it), or a collapsed scope's size and commonest ops.
 */
import { formatSeconds, h } from './dom';
import { Box } from './layout';
import { MARK_TEXT } from './legend';
import { GraphDocument, MemoryInfo } from './schema';
import { StepState } from './state';

/** What a tooltip reads besides the box. */
export interface TooltipFacts {
  doc: GraphDocument;
  state: StepState;
  /** The memory plan, when the stage shown is the compiled graph it was made for. */
  memory: MemoryInfo | null;
}

/** The (key, value) rows of `box`'s tooltip. */
export function tooltipRows(box: Box, facts: TooltipFacts): [string, string][] {
  const rows: [string, string][] = [];
  const { doc, state: st, memory } = facts;
  if (box.type === 'node') {
    const node = box.node!;
    rows.push(['name', node.name], ['op', node.op], ['kind', node.kind], ['shape', node.shape], ['dtype', node.dtype]);
    rows.push(['device', node.device]);
    rows.push(['location', node.location || '\u2014']);
    rows.push(['value', st.values.get(node.id) ?? '\u2014']);
    rows.push(['grad', st.grads.get(node.id) ?? '\u2014']);
    if (node.mark) {
      rows.push(['compiler', node.note || MARK_TEXT[node.mark] || node.mark]);
    }
    if (memory && memory.slots.has(node.id)) {
      const inPlace = memory.inPlace.has(node.id) ? ' (in place)' : '';
      rows.push(['buffer', `#${memory.slots.get(node.id)}${inPlace}`]);
    }
    if (doc.stepper && st.executed.has(node.id)) {
      rows.push(['run', 'this node has run']);
    }
    if (st.active === node.id && st.seconds !== null) {
      rows.push(['time', formatSeconds(st.seconds)]);
    }
  } else {
    const ops = new Map<string, number>();
    for (const id of box.members) {
      const op = doc.byId.get(id)?.op || '?';
      ops.set(op, (ops.get(op) ?? 0) + 1);
    }
    const summary = [...ops]
      .sort((a, b) => b[1] - a[1])
      .slice(0, 6)
      .map(([op, c]) => `${op} \u00d7${c}`)
      .join(', ');
    rows.push(['scope', box.scope], ['nodes', String(box.members.length)], ['ops', summary], ['', 'click to expand']);
  }
  return rows;
}

/** The tooltip element inside the canvas (text only, in a table). */
export class Tooltip {
  readonly el: HTMLDivElement;

  constructor() {
    this.el = h('div', 'kg-tooltip');
    this.el.style.display = 'none';
  }

  /** Show `rows`. */
  show(rows: [string, string][]): void {
    const table = h('table', 'kg-tooltip-table');
    for (const [key, value] of rows) {
      const tr = h('tr', '');
      tr.append(h('th', '', key), h('td', '', value));
      table.appendChild(tr);
    }
    this.el.replaceChildren(table);
    this.el.style.display = '';
  }

  hide(): void {
    this.el.style.display = 'none';
  }

  /** Place the tooltip beside the pointer, inside `canvas`. */
  move(event: MouseEvent, canvas: HTMLElement): void {
    const rect = canvas.getBoundingClientRect();
    const x = event.clientX - rect.left + 14;
    const y = event.clientY - rect.top + 14;
    const maxX = Math.max(0, rect.width - this.el.offsetWidth - 4);
    this.el.style.left = `${Math.min(x, maxX)}px`;
    this.el.style.top = `${y}px`;
  }
}
