/**
 * What compiling cost and bought, below a compiler view's drawing: compile time against one
 * run as bars, the memory plan's peak against no reuse, the source of each fused kernel and
 * the generated plan (folded sections that stay open across updates).
 */
import { formatBytes } from './compiler';
import { formatSeconds, h } from './dom';
import { CompilerInfo } from './schema';

/** A bar of `share` percent, its name, its value and a note. */
function barRow(what: string | null, fillClass: string, share: number, name: string, value: string, note: string): HTMLElement {
  const row = h('div', 'kg-bar-row');
  if (what !== null) {
    row.setAttribute('data-what', what);
  }
  const track = h('span', 'kg-bar-track');
  const fill = h('span', `kg-bar-fill ${fillClass}`);
  fill.style.width = `${share}%`;
  track.appendChild(fill);
  row.append(h('span', 'kg-bar-name', name), track, h('span', 'kg-bar-value', value));
  if (note) {
    row.appendChild(h('span', 'kg-bar-note', note));
  }
  return row;
}

/** Compile against run time, as bars of the larger one's length. */
function timingBars(compiler: CompilerInfo): HTMLElement {
  const timing = h('div', 'kg-timing');
  const times: [string, number | null, string][] = [
    ['compile', compiler.compileSeconds, compiler.passesSeconds !== null ? `passes ${formatSeconds(compiler.passesSeconds)}` : ''],
    [
      'run',
      compiler.runSeconds,
      compiler.runSeconds === null
        ? 'not measured: explain with feed values to time one run'
        : compiler.compileSeconds !== null && compiler.runSeconds > 0
          ? `one Session.run; compiling costs ${Math.round(compiler.compileSeconds / compiler.runSeconds).toLocaleString('en')} runs`
          : 'one Session.run'
    ]
  ];
  const longest = Math.max(...times.map(t => t[1] ?? 0), 1e-12);
  for (const [name, seconds, note] of times) {
    const share = seconds === null ? 0 : Math.max(1, (100 * seconds) / longest);
    const value = seconds === null ? 'n/a' : formatSeconds(seconds);
    timing.appendChild(barRow(name, `kg-bar-${name}`, share, name, value, note));
  }
  return timing;
}

/** The memory plan: peak bytes against no reuse, buffers, in-place nodes. */
function memoryBar(memory: NonNullable<CompilerInfo['memory']>): HTMLElement {
  const box = h('div', 'kg-memory');
  const buffers = `${memory.buffers} buffer${memory.buffers === 1 ? '' : 's'}, ${memory.inPlace.size} computed in place`;
  if (memory.peakBytes !== null && memory.naiveBytes !== null && memory.naiveBytes > 0) {
    const share = memory.peakBytes / memory.naiveBytes;
    box.appendChild(
      barRow(
        null,
        'kg-bar-memory',
        Math.max(1, Math.min(100, 100 * share)),
        'memory',
        `peak ${formatBytes(memory.peakBytes)}`,
        `${Math.round(100 * share)}% of ${formatBytes(memory.naiveBytes)} without reuse; ${buffers}`
      )
    );
  } else {
    box.appendChild(
      barRow(null, 'kg-bar-memory', 0, 'memory', 'n/a', `bytes unknown (some shapes only known at run time); ${buffers}`)
    );
  }
  return box;
}

/** Fill `el` for `compiler` (hidden without one), keeping open the sections that were. */
export function buildCompilerDetails(el: HTMLElement, compiler: CompilerInfo | null): void {
  const opened = new Set<string>();
  for (const d of Array.from(el.querySelectorAll('details'))) {
    if ((d as HTMLDetailsElement).open) {
      opened.add(d.getAttribute('data-key') ?? '');
    }
  }
  el.replaceChildren();
  el.style.display = compiler ? '' : 'none';
  if (!compiler) {
    return;
  }
  const details = (key: string, className: string, title: string): HTMLDetailsElement => {
    const d = h('details', className);
    d.setAttribute('data-key', key);
    d.open = opened.has(key);
    d.appendChild(h('summary', 'kg-summary', title));
    return d;
  };
  const stats = h('div', 'kg-compiler-stats');
  stats.appendChild(timingBars(compiler));
  if (compiler.memory) {
    stats.appendChild(memoryBar(compiler.memory));
  }
  el.appendChild(stats);
  if (compiler.kernels.length > 0) {
    const all = details('kernels', 'kg-kernels', `fused kernels (${compiler.kernels.length})`);
    for (const k of compiler.kernels) {
      const one = details(`kernel:${k.id}`, 'kg-kernel', `${k.kernel} computes ${k.name}: ${k.members.join(' \u2192 ')}`);
      one.setAttribute('data-group', k.id);
      one.appendChild(h('pre', 'kg-source', k.source));
      all.appendChild(one);
    }
    el.appendChild(all);
  }
  if (compiler.planSource) {
    const plan = details('plan', 'kg-plan', 'generated plan (one line per node)');
    plan.appendChild(h('pre', 'kg-source', compiler.planSource));
    el.appendChild(plan);
  }
}

/** Open (and scroll to) the source of the fused kernel with group id `id` in `el`. */
export function openKernel(el: HTMLElement, id: string): void {
  const all = el.querySelector('details.kg-kernels') as HTMLDetailsElement | null;
  for (const d of Array.from(el.querySelectorAll('details.kg-kernel'))) {
    if (d.getAttribute('data-group') === id) {
      if (all) {
        all.open = true;
      }
      (d as HTMLDetailsElement).open = true;
      d.scrollIntoView?.({ block: 'nearest' });
    }
  }
}
