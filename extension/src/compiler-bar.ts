/**
 * The compiler view's pass selector: a button per stage ("as written", then each pass, the
 * skipped ones disabled), and what the pass shown did (node counts, time, its rewrites).
 */
import { drawable } from './compiler';
import { button, formatSeconds, h } from './dom';
import { CompilerInfo } from './schema';

/**
 * Fill `el` for `compiler` (hidden without one) with stage `shown` selected;
 * `onSelect(i)` is called when the learner picks stage `i`.
 */
export function updateCompilerBar(
  el: HTMLElement,
  compiler: CompilerInfo | null,
  shown: number,
  shownName: string | null,
  onSelect: (index: number) => void
): void {
  el.replaceChildren();
  el.style.display = compiler ? '' : 'none';
  if (!compiler) {
    el.removeAttribute('data-stage');
    return;
  }
  el.setAttribute('data-stage', shownName ?? '');
  const bar = h('div', 'kg-stages');
  bar.setAttribute('role', 'tablist');
  compiler.stages.forEach((stage, i) => {
    const b = button('kg-stage', stage.name, '');
    b.setAttribute('data-stage', stage.name);
    b.setAttribute('role', 'tab');
    const selected = i === shown;
    b.setAttribute('aria-selected', String(selected));
    b.classList.toggle('kg-stage-selected', selected);
    if (stage.skipped || !drawable(compiler, i)) {
      b.disabled = true;
      b.classList.add('kg-stage-skipped');
      b.title = stage.skipped ? `${stage.name} was switched off (Session(skip_passes=...))` : 'nothing to draw';
      b.appendChild(h('span', 'kg-stage-count', 'off'));
    } else {
      const count = stage.after ?? 0;
      b.title =
        i === 0 || stage.before === null
          ? `${count} nodes`
          : `${stage.before} \u2192 ${count} nodes, ${stage.changes.length} changes`;
      b.appendChild(h('span', 'kg-stage-count', String(count)));
      b.addEventListener('click', () => onSelect(i));
    }
    bar.appendChild(b);
  });
  el.appendChild(bar);

  const stage = compiler.stages[shown];
  if (!stage) {
    return;
  }
  const info = h('div', 'kg-stage-info');
  let summary = stage.name;
  if (stage.before !== null && stage.after !== null && shown > 0) {
    summary += `: ${stage.before} \u2192 ${stage.after} nodes`;
  } else if (stage.after !== null) {
    summary += `: ${stage.after} nodes`;
  }
  if (stage.seconds !== null && shown > 0) {
    summary += ` in ${formatSeconds(stage.seconds)}`;
  }
  info.appendChild(h('span', 'kg-stage-summary', summary));
  if (!compiler.optimized) {
    info.appendChild(h('span', 'kg-skipped', 'passes off: Session(optimize=False)'));
  } else if (compiler.skipped.length > 0) {
    info.appendChild(h('span', 'kg-skipped', `skipped: ${compiler.skipped.join(', ')}`));
  }
  const list = h('ul', 'kg-changes');
  const listed = stage.changes.slice(0, 30);
  for (const change of listed) {
    list.appendChild(h('li', 'kg-change', change));
  }
  if (stage.changes.length > listed.length) {
    list.appendChild(h('li', 'kg-change kg-more', `\u2026 and ${stage.changes.length - listed.length} more`));
  }
  if (stage.changes.length === 0 && shown > 0) {
    list.appendChild(h('li', 'kg-change kg-none', 'no rewrites'));
  }
  if (stage.ghostsOmitted > 0) {
    list.appendChild(h('li', 'kg-change kg-more', `${stage.ghostsOmitted} more removed nodes not drawn`));
  }
  info.appendChild(list);
  el.appendChild(info);
}
