/**
 * The controls around the drawing: the header (title, mode, legend, warning) and the
 * toolbar (step back / play / pause / step forward, speed, the step scrubber with the
 * phase and node of the step shown, name search, scope and view buttons).
 */
import { button, formatSeconds, h, iconButton } from './dom';
import { SPEEDS } from './playback';
import { GraphDocument, SCHEMA_VERSION } from './schema';
import { StepState } from './state';

/** What the controls ask of the renderer. */
export interface ControlActions {
  back(): void;
  forward(): void;
  play(): void;
  pause(): void;
  speed(speed: number): void;
  scrub(step: number): void;
  search(query: string): void;
  /** Enter in the search box: show the matches. */
  reveal(): void;
  expandAll(): void;
  collapseAll(): void;
  fit(): void;
  exportSvg(): void;
}

/** The elements the renderer updates. */
export interface Controls {
  header: HTMLElement;
  toolbar: HTMLElement;
  titleEl: HTMLElement;
  modeEl: HTMLElement;
  legendEl: HTMLElement;
  warningEl: HTMLElement;
  scrub: HTMLInputElement;
  counter: HTMLElement;
  phaseEl: HTMLElement;
  stepNodeEl: HTMLElement;
  searchInput: HTMLInputElement;
  searchCount: HTMLElement;
}

export function buildControls(actions: ControlActions): Controls {
  const header = h('div', 'kg-header');
  const titleEl = h('span', 'kg-title');
  const modeEl = h('span', 'kg-mode');
  const legendEl = h('span', 'kg-legend');
  const warningEl = h('span', 'kg-warning');
  header.append(titleEl, modeEl, legendEl, warningEl);

  const toolbar = h('div', 'kg-toolbar');
  const back = iconButton('kg-step-back', 'back', 'Step back');
  const play = iconButton('kg-play', 'play', 'Play');
  const pause = iconButton('kg-pause', 'pause', 'Pause');
  const forward = iconButton('kg-step-forward', 'forward', 'Step forward');
  back.addEventListener('click', () => actions.back());
  forward.addEventListener('click', () => actions.forward());
  play.addEventListener('click', () => actions.play());
  pause.addEventListener('click', () => actions.pause());

  const speedSelect = h('select', 'kg-speed');
  speedSelect.title = 'Speed';
  speedSelect.setAttribute('aria-label', 'Speed');
  for (const s of SPEEDS) {
    const opt = h('option', '', `${s}\u00d7`);
    opt.value = String(s);
    opt.selected = s === 1;
    speedSelect.appendChild(opt);
  }
  speedSelect.addEventListener('change', () => actions.speed(Number(speedSelect.value)));

  const scrub = h('input', 'kg-scrub');
  scrub.type = 'range';
  scrub.min = '0';
  scrub.step = '1';
  scrub.title = 'Step';
  scrub.setAttribute('aria-label', 'Step');
  scrub.addEventListener('input', () => actions.scrub(Number(scrub.value)));

  const counter = h('span', 'kg-step-counter');
  const phaseEl = h('span', 'kg-phase');
  const stepNodeEl = h('span', 'kg-step-node');

  const searchInput = h('input', 'kg-search');
  searchInput.type = 'search';
  searchInput.placeholder = 'search names';
  searchInput.setAttribute('aria-label', 'Search node names');
  // Typing here must not reach JupyterLab's notebook shortcuts ("a" inserts a cell...).
  searchInput.setAttribute('data-lm-suppress-shortcuts', 'true');
  searchInput.addEventListener('input', () => actions.search(searchInput.value));
  searchInput.addEventListener('keydown', event => {
    if (event.key === 'Enter') {
      actions.reveal();
    }
    event.stopPropagation(); // keep JupyterLab's notebook shortcuts out of the box
  });
  const searchCount = h('span', 'kg-search-count');

  const expandAll = button('kg-expand-all', '\u229e', 'Expand all scopes');
  const collapseAll = button('kg-collapse-all', '\u229f', 'Collapse all scopes');
  const fit = button('kg-fit', '\u2922', 'Fit to view');
  const exportButton = button('kg-export', 'Export SVG', 'Download the drawing as SVG');
  expandAll.addEventListener('click', () => actions.expandAll());
  collapseAll.addEventListener('click', () => actions.collapseAll());
  fit.addEventListener('click', () => actions.fit());
  exportButton.addEventListener('click', () => actions.exportSvg());

  const group = (...children: HTMLElement[]): HTMLElement => {
    const g = h('span', 'kg-group');
    g.append(...children);
    return g;
  };
  const playback = group(back, play, pause, forward, speedSelect);
  const scrubbing = group(scrub, counter, phaseEl, stepNodeEl);
  // A compiler view has no animation: its pass selector takes the controls' place.
  playback.classList.add('kg-playback');
  scrubbing.classList.add('kg-playback');
  toolbar.append(
    playback,
    scrubbing,
    group(searchInput, searchCount),
    group(expandAll, collapseAll, fit, exportButton)
  );
  return {
    header,
    toolbar,
    titleEl,
    modeEl,
    legendEl,
    warningEl,
    scrub,
    counter,
    phaseEl,
    stepNodeEl,
    searchInput,
    searchCount
  };
}

/** The header's title, mode and version warning for `doc`. */
export function showTitle(c: Controls, doc: GraphDocument): void {
  c.titleEl.textContent = doc.title;
  c.modeEl.textContent = doc.mode;
  c.modeEl.style.display = doc.mode ? '' : 'none';
  c.warningEl.textContent =
    doc.version > SCHEMA_VERSION
      ? `document version ${doc.version} is newer than this viewer (${SCHEMA_VERSION}); some parts may be missing`
      : '';
}

/** The scrubber, step counter, phase and the node of the step shown. */
export function showStep(c: Controls, doc: GraphDocument, step: number, n: number, st: StepState): void {
  c.scrub.max = String(n);
  c.scrub.value = String(step);
  c.counter.textContent = `step ${step} / ${n}`;
  c.phaseEl.textContent = st.phase;
  c.phaseEl.setAttribute('data-phase', st.phase);
  const node = st.active ? doc.byId.get(st.active) : undefined;
  let text = node ? node.name : '';
  if (node && st.seconds !== null) {
    text += ` (${formatSeconds(st.seconds)})`;
  }
  c.stepNodeEl.textContent = text;
}
