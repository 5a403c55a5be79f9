/**
 * The one graph renderer, used by the ipywidgets view and the MIME renderer.
 *
 *     const r = new GraphRenderer(container);
 *     r.setDocument(doc);          // a document of kernelgraph/widgets/SCHEMA.md
 *     r.setStep(3);                // show the state after 3 steps
 *
 * Safety: every string of the document reaches the page through `textContent`
 * (d3 `.text()`) or an attribute value (`setAttribute`, d3 `.attr()`); nothing
 * is parsed as HTML, and no document string is used in a CSS selector.
 */
import { interpolateRgb } from 'd3-interpolate';
import { select, Selection } from 'd3-selection';
import { curveBasis, line } from 'd3-shape';
import 'd3-transition';
import { D3ZoomEvent, zoom, ZoomBehavior, zoomIdentity } from 'd3-zoom';

import { defaultStage, drawable, formatBytes, stageDocument, stageIndex } from './compiler';
import { Box, Cluster, computeLayout, LaidEdge, Layout, Point, topScopes } from './layout';
import { GRAD_KINDS, GraphDocument, normalizeDocument, SCHEMA_VERSION } from './schema';
import { stateAt, StepState, Timeline } from './state';

/**
 * Fade out and remove the elements that left the drawing. Dropping their classes (for
 * 'kg-exiting') first keeps them out of the next data join and of the test hooks while they
 * fade.
 */
function fadeOut(
  exit: Selection<SVGGElement, any, any, any>,
  duration: number,
  ...classes: string[]
): void {
  for (const c of classes) {
    exit.classed(c, false);
  }
  exit.classed('kg-exiting', true).transition('fade').duration(duration).style('opacity', 0).remove();
}

export interface RendererOptions {
  /** Called when the view changes the step (controls, playback), not for `setStep`. */
  onStepChange?: (step: number) => void;
  /** Top-level scopes start collapsed when the document has more nodes than this (200). */
  collapseAbove?: number;
  /**
   * Drives a step-through run (a document with a `stepper` section): the Step / Run to end /
   * Reset buttons and a click on a node that has not run yet ('run_to'). Without it (a saved
   * notebook, no kernel) the stepper bar only says where the run stands.
   */
  onAction?: (action: StepAction, node?: string) => void;
}

export type StepAction = 'step' | 'run' | 'reset' | 'run_to';

/** What each compiler mark means (legend chips and tooltips). */
const MARK_TEXT: Record<string, string> = {
  folded: 'folded to a constant',
  merged: 'merged (computes a duplicate too)',
  simplified: 'stands for a simplified node',
  fused: 'inside a fused kernel',
  removed: 'removed by this pass'
};

export interface SetDocumentOptions {
  /**
   * Steps applied to show (0..length), or a function of the new document's
   * step count giving it. Omitted, null or negative: keep the current step (or
   * stay at the end if the view was at the end); a first document is shown at its end.
   */
  step?: number | null | ((length: number) => number | null);
}

/** Milliseconds per step at speed 1. */
const BASE_INTERVAL = 800;
const SPEEDS = [0.25, 0.5, 1, 2, 4, 8, 16, 64];
const PAD = 16;
const MIN_HEIGHT = 120;
const MAX_HEIGHT = 600;
/** The automatic fit shrinks the drawing no further than this. */
const MIN_FIT_SCALE = 0.45;

const GRAD_LOW = '#fdae6b';
const GRAD_HIGH = '#7f0000';
const GRAD_ZERO = '#bdbdbd';
const GRAD_NONFINITE = '#d6007e';
const GRAD_UNKNOWN = '#e6550d';
const gradRamp = interpolateRgb(GRAD_LOW, GRAD_HIGH);

/** Styles of the drawing itself, kept inside the SVG so that an exported file looks the same. */
const SVG_STYLE = `
svg.kg-svg { font-family: var(--jp-ui-font-family, system-ui, -apple-system, "Segoe UI", sans-serif); }
svg.kg-svg .kg-box { fill: #ffffff; stroke: #475569; stroke-width: 1.2px; transition: stroke 0.2s, stroke-width 0.2s, fill 0.2s; }
svg.kg-svg g[data-kind="input"] .kg-box { fill: #dbeafe; stroke: #3b82f6; }
svg.kg-svg g[data-kind="variable"] .kg-box { fill: #dcfce7; stroke: #16a34a; }
svg.kg-svg g[data-kind="const"] .kg-box { fill: #f1f5f9; stroke: #64748b; }
svg.kg-svg g[data-kind="leaf"] .kg-box { fill: #fef9c3; stroke: #ca8a04; }
svg.kg-svg g[data-kind="op"] .kg-box { fill: #ffffff; stroke: #475569; }
svg.kg-svg g[data-kind="gradient"] .kg-box { fill: #fce7f3; stroke: #db2777; }
svg.kg-svg g.kg-scope .kg-box { fill: #e2e8f0; stroke: #334155; stroke-width: 1.5px; stroke-dasharray: 5 2; }
svg.kg-svg g.kg-item { cursor: default; }
svg.kg-svg g.kg-scope { cursor: pointer; }
svg.kg-svg .kg-label { font-size: 12px; font-weight: 600; fill: #0f172a; text-anchor: middle; }
svg.kg-svg .kg-value { font-size: 10.5px; fill: #334155; text-anchor: middle; font-family: var(--jp-code-font-family, ui-monospace, Menlo, Consolas, monospace); }
svg.kg-svg .kg-grad { font-size: 10.5px; fill: #b91c1c; text-anchor: middle; font-weight: 600; font-family: var(--jp-code-font-family, ui-monospace, Menlo, Consolas, monospace); }
svg.kg-svg .kg-toggle { font-size: 13px; font-weight: 700; fill: #334155; text-anchor: middle; }
svg.kg-svg g[data-mark="folded"] .kg-box { stroke: #0d9488; stroke-width: 3px; fill: #ccfbf1; }
svg.kg-svg g[data-mark="merged"] .kg-box { stroke: #9333ea; stroke-width: 3px; }
svg.kg-svg g[data-mark="simplified"] .kg-box { stroke: #2563eb; stroke-width: 3px; }
svg.kg-svg g[data-mark="fused"] .kg-box { stroke: #ea580c; }
svg.kg-svg g[data-mark="removed"] { opacity: 0.45; }
svg.kg-svg g[data-mark="removed"] .kg-box { stroke-dasharray: 4 3; fill: #f8fafc; }
svg.kg-svg g.kg-cluster.kg-fused-group .kg-cluster-box { fill: rgba(234, 88, 12, 0.07); stroke: #ea580c; stroke-width: 1.6px; stroke-dasharray: none; }
svg.kg-svg g.kg-cluster.kg-fused-group .kg-cluster-label { fill: #c2410c; }
svg.kg-svg g.kg-executed .kg-box { fill: #ecfdf5; stroke: #059669; }
svg.kg-svg g.kg-next .kg-box { stroke: #2563eb; stroke-width: 3px; stroke-dasharray: 6 3; }
svg.kg-svg g.kg-failed .kg-box { stroke: #dc2626; stroke-width: 3.5px; fill: #fee2e2; }
svg.kg-svg g.kg-active .kg-box { stroke: #f97316; stroke-width: 3.5px; }
svg.kg-svg g.kg-active[data-phase="backward"] .kg-box { stroke: #dc2626; }
svg.kg-svg g.kg-match .kg-box { stroke: #7c3aed; stroke-width: 3px; }
svg.kg-svg g.kg-dim { opacity: 0.35; }
svg.kg-svg .kg-edge-path { fill: none; stroke: #94a3b8; stroke-width: 1.4px; transition: stroke 0.2s, stroke-width 0.2s; }
svg.kg-svg g.kg-edge-active .kg-edge-path { stroke: #f97316; stroke-width: 2.5px; }
svg.kg-svg .kg-edge-label { font-size: 10px; fill: var(--jp-ui-font-color2, #64748b); text-anchor: middle; paint-order: stroke; stroke: var(--jp-layout-color0, #ffffff); stroke-width: 3px; stroke-linejoin: round; font-family: var(--jp-code-font-family, ui-monospace, Menlo, Consolas, monospace); }
svg.kg-svg .kg-cluster-box { fill: rgba(148, 163, 184, 0.10); stroke: #94a3b8; stroke-width: 1px; stroke-dasharray: 4 3; cursor: pointer; }
svg.kg-svg .kg-cluster-label { font-size: 11px; font-weight: 600; fill: var(--jp-ui-font-color1, #475569); cursor: pointer; }
svg.kg-svg .kg-marker { fill: #94a3b8; }
svg.kg-svg .kg-marker-grad { fill: #b91c1c; }
svg.kg-svg .kg-marker-active { fill: #f97316; }
`;

let instances = 0;

type GSel<D> = Selection<SVGGElement, D, any, any>;

/** Shorten `text` to `max` characters, on one line. */
export function fitText(text: string, max: number): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > max ? flat.slice(0, Math.max(1, max - 1)) + '\u2026' : flat;
}

function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  className: string,
  text?: string
): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  el.className = className;
  if (text !== undefined) {
    el.textContent = text;
  }
  return el;
}

function button(className: string, text: string, title: string): HTMLButtonElement {
  const b = h('button', 'kg-button ' + className, text);
  b.type = 'button';
  b.title = title;
  b.setAttribute('aria-label', title);
  return b;
}

/** Icon paths in a 16x16 box (fonts often lack the media-control characters). */
const ICONS: Record<string, string> = {
  play: 'M4 2.5v11l9.5-5.5z',
  pause: 'M3.5 2.5h3v11h-3zM9.5 2.5h3v11h-3z',
  back: 'M2.5 2.5h2v11h-2zM14 2.5v11l-8.5-5.5z',
  forward: 'M11.5 2.5h2v11h-2zM2 2.5v11l8.5-5.5z'
};

function iconButton(className: string, icon: string, title: string): HTMLButtonElement {
  const b = button(className + ' kg-icon-button', '', title);
  const svg = document.createElementNS('http://www.w3.org/2000/svg', 'svg');
  svg.setAttribute('viewBox', '0 0 16 16');
  svg.setAttribute('width', '12');
  svg.setAttribute('height', '12');
  svg.setAttribute('aria-hidden', 'true');
  const path = document.createElementNS('http://www.w3.org/2000/svg', 'path');
  path.setAttribute('d', ICONS[icon]);
  path.setAttribute('fill', 'currentColor');
  svg.appendChild(path);
  b.appendChild(svg);
  return b;
}

/** A number in a short form (legend ends). */
function shortNumber(x: number): string {
  if (x === 0 || !Number.isFinite(x)) {
    return String(x);
  }
  const a = Math.abs(x);
  return a >= 1e4 || a < 1e-3 ? x.toExponential(1) : String(Number(x.toPrecision(2)));
}

function formatSeconds(s: number): string {
  if (s < 1e-3) {
    return `${(s * 1e6).toPrecision(3)} \u00b5s`;
  }
  if (s < 1) {
    return `${(s * 1e3).toPrecision(3)} ms`;
  }
  return `${s.toPrecision(3)} s`;
}

function gradColour(pos: number | null): string {
  if (pos === null) {
    return GRAD_UNKNOWN;
  }
  if (pos < 0) {
    return GRAD_ZERO;
  }
  if (pos > 1) {
    return GRAD_NONFINITE;
  }
  return gradRamp(pos);
}

/** Draws one graph document with its animation controls into a container element. */
export class GraphRenderer {
  /** The root element (`.kg-graph`), appended to the container. */
  readonly root: HTMLDivElement;

  private readonly options: RendererOptions;
  private readonly uid: string;
  private doc: GraphDocument = normalizeDocument({});
  /** The document as given; `doc` is what is drawn (one compiler stage of it, or itself). */
  private fullDoc: GraphDocument = this.doc;
  private stage = -1;
  private stageName: string | null = null;
  private message = '';
  private timeline: Timeline = new Timeline(this.doc);
  private state: StepState = stateAt(this.timeline, 0);
  private layout: Layout | null = null;
  private hasDocument = false;
  private step = 0;
  private collapsed = new Set<string>();
  private knownScopes = new Set<string>();
  private playing = false;
  private timer: number | null = null;
  private speed = 1;
  private query = '';
  private matches = new Set<string>();
  private userZoomed = false;
  private lastWidth = 0;
  private disposed = false;
  private hovered: Box | null = null;

  // Controls and drawing.
  private readonly titleEl: HTMLElement;
  private readonly modeEl: HTMLElement;
  private readonly warningEl: HTMLElement;
  private readonly legendEl: HTMLElement;
  private readonly gradLegendEl: HTMLElement;
  private readonly scrub: HTMLInputElement;
  private readonly counter: HTMLElement;
  private readonly phaseEl: HTMLElement;
  private readonly stepNodeEl: HTMLElement;
  private readonly speedSelect: HTMLSelectElement;
  private readonly searchInput: HTMLInputElement;
  private readonly searchCount: HTMLElement;
  private readonly canvas: HTMLDivElement;
  private readonly compilerEl: HTMLElement;
  private readonly compilerDetailsEl: HTMLElement;
  private readonly stepperEl: HTMLElement;
  private readonly tooltip: HTMLDivElement;
  private readonly emptyEl: HTMLElement;
  private readonly svg: Selection<SVGSVGElement, unknown, null, undefined>;
  private readonly viewport: GSel<unknown>;
  private readonly clusterLayer: GSel<unknown>;
  private readonly edgeLayer: GSel<unknown>;
  private readonly nodeLayer: GSel<unknown>;
  private readonly zoomBehavior: ZoomBehavior<SVGSVGElement, unknown>;
  private readonly resizeObserver: ResizeObserver | null = null;

  constructor(container: HTMLElement, options: RendererOptions = {}) {
    this.options = options;
    this.uid = `kg${++instances}`;
    const root = (this.root = h('div', 'kg-graph'));
    root.tabIndex = -1;

    const header = h('div', 'kg-header');
    this.titleEl = h('span', 'kg-title');
    this.modeEl = h('span', 'kg-mode');
    this.legendEl = h('span', 'kg-legend');
    this.warningEl = h('span', 'kg-warning');
    header.append(this.titleEl, this.modeEl, this.legendEl, this.warningEl);

    const toolbar = h('div', 'kg-toolbar');
    const back = iconButton('kg-step-back', 'back', 'Step back');
    const play = iconButton('kg-play', 'play', 'Play');
    const pause = iconButton('kg-pause', 'pause', 'Pause');
    const forward = iconButton('kg-step-forward', 'forward', 'Step forward');
    back.addEventListener('click', () => {
      this.pause();
      this.changeStep(this.step - 1);
    });
    forward.addEventListener('click', () => {
      this.pause();
      this.changeStep(this.step + 1);
    });
    play.addEventListener('click', () => this.play());
    pause.addEventListener('click', () => this.pause());

    this.speedSelect = h('select', 'kg-speed');
    this.speedSelect.title = 'Speed';
    this.speedSelect.setAttribute('aria-label', 'Speed');
    for (const s of SPEEDS) {
      const opt = h('option', '', `${s}\u00d7`);
      opt.value = String(s);
      opt.selected = s === 1;
      this.speedSelect.appendChild(opt);
    }
    this.speedSelect.addEventListener('change', () => {
      const s = Number(this.speedSelect.value);
      this.speed = Number.isFinite(s) && s > 0 ? s : 1;
      if (this.playing) {
        this.schedule();
      }
    });

    this.scrub = h('input', 'kg-scrub');
    this.scrub.type = 'range';
    this.scrub.min = '0';
    this.scrub.step = '1';
    this.scrub.title = 'Step';
    this.scrub.setAttribute('aria-label', 'Step');
    this.scrub.addEventListener('input', () => {
      this.pause();
      this.changeStep(Number(this.scrub.value));
    });

    this.counter = h('span', 'kg-step-counter');
    this.phaseEl = h('span', 'kg-phase');
    this.stepNodeEl = h('span', 'kg-step-node');

    this.searchInput = h('input', 'kg-search');
    this.searchInput.type = 'search';
    this.searchInput.placeholder = 'search names';
    this.searchInput.setAttribute('aria-label', 'Search node names');
    // Typing here must not reach JupyterLab's notebook shortcuts ("a" inserts a cell...).
    this.searchInput.setAttribute('data-lm-suppress-shortcuts', 'true');
    this.searchInput.addEventListener('input', () => this.setQuery(this.searchInput.value));
    this.searchInput.addEventListener('keydown', event => {
      if (event.key === 'Enter') {
        this.revealMatches();
      }
      event.stopPropagation(); // keep JupyterLab's notebook shortcuts out of the box
    });
    this.searchCount = h('span', 'kg-search-count');

    const expandAll = button('kg-expand-all', '\u229e', 'Expand all scopes');
    const collapseAll = button('kg-collapse-all', '\u229f', 'Collapse all scopes');
    const fit = button('kg-fit', '\u2922', 'Fit to view');
    const exportButton = button('kg-export', 'Export SVG', 'Download the drawing as SVG');
    expandAll.addEventListener('click', () => this.setCollapsed([]));
    collapseAll.addEventListener('click', () => this.setCollapsed(topScopes(this.doc).keys()));
    fit.addEventListener('click', () => {
      this.userZoomed = false;
      this.fit(true, true);
    });
    exportButton.addEventListener('click', () => this.downloadSvg());

    const group = (...children: HTMLElement[]): HTMLElement => {
      const g = h('span', 'kg-group');
      g.append(...children);
      return g;
    };
    const playback = group(back, play, pause, forward, this.speedSelect);
    const scrubbing = group(this.scrub, this.counter, this.phaseEl, this.stepNodeEl);
    // A compiler view has no animation: its pass selector takes the controls' place.
    playback.classList.add('kg-playback');
    scrubbing.classList.add('kg-playback');
    toolbar.append(
      playback,
      scrubbing,
      group(this.searchInput, this.searchCount),
      group(expandAll, collapseAll, fit, exportButton)
    );

    this.canvas = h('div', 'kg-canvas');
    this.tooltip = h('div', 'kg-tooltip');
    this.tooltip.style.display = 'none';
    this.emptyEl = h('div', 'kg-empty', 'empty graph');
    this.gradLegendEl = h('div', 'kg-grad-legend');

    const svgEl = document.createElementNS('http://www.w3.org/2000/svg', 'svg');
    this.svg = select(svgEl)
      .attr('class', 'kg-svg')
      .attr('width', '100%')
      .attr('height', MIN_HEIGHT);
    this.svg.append('style').text(SVG_STYLE);
    const defs = this.svg.append('defs');
    for (const [suffix, cls] of [
      ['', 'kg-marker'],
      ['-grad', 'kg-marker-grad'],
      ['-active', 'kg-marker-active']
    ]) {
      defs
        .append('marker')
        .attr('id', `${this.uid}-arrow${suffix}`)
        .attr('viewBox', '0 0 10 10')
        .attr('refX', 9)
        .attr('refY', 5)
        .attr('markerWidth', 7)
        .attr('markerHeight', 7)
        .attr('orient', 'auto-start-reverse')
        .append('path')
        .attr('class', cls)
        .attr('d', 'M0,0 L10,5 L0,10 z');
    }
    this.viewport = this.svg.append('g').attr('class', 'kg-viewport');
    this.clusterLayer = this.viewport.append('g').attr('class', 'kg-clusters');
    this.edgeLayer = this.viewport.append('g').attr('class', 'kg-edges');
    this.nodeLayer = this.viewport.append('g').attr('class', 'kg-nodes');

    this.zoomBehavior = zoom<SVGSVGElement, unknown>()
      .scaleExtent([0.05, 4])
      // Wheel zooms only with Ctrl/Cmd, so that scrolling the notebook still works.
      .filter((event: any) =>
        event.type === 'wheel' ? event.ctrlKey || event.metaKey : !event.ctrlKey && !event.button
      )
      .on('zoom', (event: D3ZoomEvent<SVGSVGElement, unknown>) => {
        this.viewport.attr('transform', event.transform.toString());
        if (event.sourceEvent) {
          this.userZoomed = true;
        }
      });
    this.svg.call(this.zoomBehavior).on('dblclick.zoom', null);

    this.canvas.append(svgEl, this.emptyEl, this.tooltip);
    this.compilerEl = h('div', 'kg-compiler');
    this.compilerDetailsEl = h('div', 'kg-compiler-details');
    this.stepperEl = h('div', 'kg-stepper');
    root.append(
      header,
      toolbar,
      this.stepperEl,
      this.compilerEl,
      this.canvas,
      this.gradLegendEl,
      this.compilerDetailsEl
    );
    container.appendChild(root);

    if (typeof ResizeObserver !== 'undefined') {
      this.resizeObserver = new ResizeObserver(() => {
        const w = this.canvas.clientWidth;
        if (w > 0 && w !== this.lastWidth && !this.userZoomed) {
          this.fit(false);
        }
      });
      this.resizeObserver.observe(this.canvas);
    }
    this.render(true);
  }

  /** The normalized document drawn (for a compiler view: the stage shown). */
  get document(): GraphDocument {
    return this.doc;
  }

  /** The compiler stage shown (its pass name, or "as written"); null for a plain graph. */
  get stageShown(): string | null {
    return this.stageName;
  }

  /** Steps applied so far (0..stepCount). */
  get currentStep(): number {
    return this.step;
  }

  get stepCount(): number {
    return this.timeline.length;
  }

  get isPlaying(): boolean {
    return this.playing;
  }

  /** Top-level scopes drawn as one box. */
  get collapsedScopes(): ReadonlySet<string> {
    return this.collapsed;
  }

  /** Show a new document (replacing the old one as a whole). */
  setDocument(raw: unknown, options: SetDocumentOptions = {}): void {
    const oldLength = this.timeline.length;
    const wasAtEnd = !this.hasDocument || this.step >= oldLength;
    this.fullDoc = normalizeDocument(raw);
    // A compiler view keeps the pass the learner picked when a new document comes.
    const compiler = this.fullDoc.compiler;
    this.stage = -1;
    if (compiler) {
      const kept = this.stageName !== null ? stageIndex(compiler, this.stageName) : null;
      this.stage = kept ?? defaultStage(compiler);
    }
    this.stageName = compiler && this.stage >= 0 ? compiler.stages[this.stage].name : null;
    this.adopt(stageDocument(this.fullDoc, this.stage));
    const n = this.timeline.length;

    const requested = typeof options.step === 'function' ? options.step(n) : options.step;
    if (typeof requested === 'number' && Number.isFinite(requested) && requested >= 0) {
      this.step = Math.min(Math.floor(requested), n);
    } else {
      this.step = wasAtEnd ? n : Math.min(this.step, n);
    }
    this.hasDocument = true;
    if (this.playing && this.step >= n) {
      this.pause();
    }
    this.updateHeader();
    this.buildCompilerDetails();
    this.updateCompilerBar();
    this.updateStepper();
    this.updateMatches();
    this.layout = null;
    this.render(true);
  }

  /** Draw `doc` (a whole document or one compiler stage of it). */
  private adopt(doc: GraphDocument): void {
    this.doc = doc;
    this.timeline = new Timeline(doc);
    // Scopes keep their collapsed/expanded state across documents; new ones
    // start collapsed in a big graph.
    const scopes = topScopes(doc);
    const collapseNew = doc.nodes.length > (this.options.collapseAbove ?? 200);
    const collapsed = new Set<string>();
    for (const scope of scopes.keys()) {
      if (this.knownScopes.has(scope) ? this.collapsed.has(scope) : collapseNew) {
        collapsed.add(scope);
      }
    }
    this.collapsed = collapsed;
    this.knownScopes = new Set(scopes.keys());
  }

  /**
   * Show one stage of a compiler view: its index or its name ("as written", "prune",
   * "fold_constants", ...). Skipped passes have no stage to show.
   */
  selectStage(which: number | string): void {
    const compiler = this.fullDoc.compiler;
    if (!compiler) {
      return;
    }
    const i = typeof which === 'string' ? stageIndex(compiler, which) : drawable(compiler, which) ? which : null;
    if (i === null || i === this.stage) {
      return;
    }
    this.stage = i;
    this.stageName = compiler.stages[i].name;
    this.adopt(stageDocument(this.fullDoc, i));
    this.step = this.timeline.length;
    this.hovered = null;
    this.tooltip.style.display = 'none';
    this.updateHeader();
    this.updateCompilerBar();
    this.updateMatches();
    this.layout = null;
    this.userZoomed = false;
    this.render(true);
  }

  /** A line for the learner under the stepper bar (the widget's `message`). */
  setMessage(text: string): void {
    this.message = text;
    this.updateStepper();
  }

  /** Open the generated source of the fused kernel computing node `id`. */
  showKernel(id: string): void {
    const all = this.compilerDetailsEl.querySelector('details.kg-kernels') as HTMLDetailsElement | null;
    for (const d of Array.from(this.compilerDetailsEl.querySelectorAll('details.kg-kernel'))) {
      if (d.getAttribute('data-group') === id) {
        if (all) {
          all.open = true;
        }
        (d as HTMLDetailsElement).open = true;
        d.scrollIntoView?.({ block: 'nearest' });
      }
    }
  }

  /** Show the state after `step` steps (clamped); does not call `onStepChange`. */
  setStep(step: number | null | undefined): void {
    const n = this.timeline.length;
    const s =
      typeof step === 'number' && Number.isFinite(step) && step >= 0 ? Math.min(Math.floor(step), n) : n;
    if (s !== this.step) {
      this.step = s;
      this.render(false);
    }
  }

  play(): void {
    const n = this.timeline.length;
    if (n === 0 || this.disposed) {
      return;
    }
    if (this.step >= n) {
      this.changeStep(0);
    }
    this.playing = true;
    this.root.classList.add('kg-playing');
    this.schedule();
  }

  pause(): void {
    this.playing = false;
    this.root.classList.remove('kg-playing');
    if (this.timer !== null) {
      window.clearTimeout(this.timer);
      this.timer = null;
    }
  }

  /** Collapse exactly the given top-level scopes. */
  setCollapsed(scopes: Iterable<string>): void {
    const known = topScopes(this.doc);
    this.collapsed = new Set([...scopes].filter(s => known.has(s)));
    this.layout = null;
    this.userZoomed = false;
    this.render(true);
  }

  toggleScope(scope: string): void {
    const next = new Set(this.collapsed);
    if (next.has(scope)) {
      next.delete(scope);
    } else {
      next.add(scope);
    }
    this.collapsed = next;
    this.layout = null;
    this.render(true);
  }

  /** Highlight nodes whose name contains `query` (case-insensitive). */
  setQuery(query: string): void {
    this.query = query.trim().toLowerCase();
    if (this.searchInput.value.trim().toLowerCase() !== this.query) {
      this.searchInput.value = query;
    }
    this.updateMatches();
    this.render(false);
  }

  /** The current drawing as a standalone SVG document. */
  toSvgString(): string {
    const clone = this.svg.node()!.cloneNode(true) as SVGSVGElement;
    for (const gone of Array.from(clone.querySelectorAll('.kg-exiting'))) {
      gone.remove();
    }
    const layout = this.layout;
    const w = Math.ceil((layout?.width ?? 0) + 2 * PAD);
    const hgt = Math.ceil((layout?.height ?? 0) + 2 * PAD + 24);
    clone.setAttribute('width', String(w));
    clone.setAttribute('height', String(hgt));
    clone.setAttribute('viewBox', `${-PAD} ${-PAD - 24} ${w} ${hgt}`);
    clone.querySelector('.kg-viewport')?.removeAttribute('transform');
    const title = document.createElementNS('http://www.w3.org/2000/svg', 'title');
    title.textContent = this.doc.title || 'kernelgraph';
    clone.insertBefore(title, clone.firstChild);
    const caption = document.createElementNS('http://www.w3.org/2000/svg', 'text');
    caption.setAttribute('x', '0');
    caption.setAttribute('y', '-10');
    caption.setAttribute('class', 'kg-label');
    caption.setAttribute('style', 'text-anchor: start');
    caption.textContent = `${this.doc.title}  (step ${this.step} / ${this.timeline.length})`.trim();
    clone.appendChild(caption);
    return new XMLSerializer().serializeToString(clone);
  }

  /** Download `toSvgString()` as a file. */
  downloadSvg(): void {
    const blob = new Blob([this.toSvgString()], { type: 'image/svg+xml' });
    const url = URL.createObjectURL(blob);
    const a = document.createElement('a');
    const base = this.doc.title.replace(/[^A-Za-z0-9_-]+/g, '_').replace(/^_+|_+$/g, '');
    a.href = url;
    a.download = `${(base || 'kernelgraph').slice(0, 60)}.svg`;
    a.style.display = 'none';
    document.body.appendChild(a);
    a.click();
    a.remove();
    window.setTimeout(() => URL.revokeObjectURL(url), 10000);
  }

  /**
   * Fit the graph into the view: all of it with `whole`, else no smaller than
   * a readable scale (a tall graph then shows its top; drag to pan, Ctrl+wheel to zoom).
   */
  fit(animate: boolean, whole = false): void {
    const layout = this.layout;
    const width = this.canvas.clientWidth;
    if (!layout || width <= 0) {
      return;
    }
    this.lastWidth = width;
    const lw = Math.max(layout.width, 1);
    const lh = Math.max(layout.height, 1);
    let k = Math.min(1, (width - 2 * PAD) / lw);
    let height = lh * k + 2 * PAD;
    if (height > MAX_HEIGHT) {
      height = MAX_HEIGHT;
      k = Math.min(k, (MAX_HEIGHT - 2 * PAD) / lh);
    }
    k = Math.max(k, whole ? 0.05 : MIN_FIT_SCALE);
    height = Math.max(MIN_HEIGHT, Math.min(MAX_HEIGHT, height));
    this.svg.attr('height', Math.round(height));
    const tx = lw * k <= width - 2 * PAD ? (width - lw * k) / 2 : PAD;
    const ty = Math.max(PAD, (height - lh * k) / 2);
    const t = zoomIdentity.translate(tx, ty).scale(k);
    if (animate) {
      this.svg.transition('zoom').duration(300).call(this.zoomBehavior.transform as any, t);
    } else {
      this.svg.call(this.zoomBehavior.transform, t);
    }
  }

  dispose(): void {
    if (this.disposed) {
      return;
    }
    this.disposed = true;
    this.pause();
    this.resizeObserver?.disconnect();
    this.svg.interrupt('zoom');
    this.root.remove();
  }

  // ---------------------------------------------------------------- internals

  /** A step change made in the view: draw it and tell the owner. */
  private changeStep(step: number): void {
    const n = this.timeline.length;
    const s = Math.max(0, Math.min(n, Math.floor(step)));
    if (s === this.step) {
      return;
    }
    this.step = s;
    this.render(false);
    this.options.onStepChange?.(s);
  }

  private interval(): number {
    return BASE_INTERVAL / this.speed;
  }

  private schedule(): void {
    if (this.timer !== null) {
      window.clearTimeout(this.timer);
    }
    this.timer = window.setTimeout(() => {
      this.timer = null;
      if (!this.playing || this.disposed) {
        return;
      }
      this.changeStep(this.step + 1);
      if (this.step >= this.timeline.length) {
        this.pause();
      } else {
        this.schedule();
      }
    }, this.interval());
  }

  private duration(): number {
    return this.playing ? Math.min(300, this.interval() * 0.6) : 250;
  }

  private updateHeader(): void {
    const doc = this.doc;
    this.titleEl.textContent = doc.title;
    this.root.classList.toggle('kg-has-compiler', this.fullDoc.compiler !== null);
    this.root.classList.toggle('kg-has-stepper', this.fullDoc.stepper !== null);
    this.modeEl.textContent = doc.mode;
    this.modeEl.style.display = doc.mode ? '' : 'none';
    this.warningEl.textContent =
      doc.version > SCHEMA_VERSION
        ? `document version ${doc.version} is newer than this viewer (${SCHEMA_VERSION}); some parts may be missing`
        : '';
    // Legend: one chip per kind present.
    this.legendEl.replaceChildren();
    const kinds = [...new Set(doc.nodes.map(n => n.kind))];
    for (const kind of kinds) {
      const item = h('span', 'kg-legend-item');
      item.setAttribute('data-kind', kind);
      item.append(h('span', 'kg-swatch'), document.createTextNode(kind));
      this.legendEl.appendChild(item);
    }
    // Compiler marks: a chip per mark present in the stage shown.
    for (const mark of new Set(doc.nodes.map(n => n.mark).filter(m => m !== ''))) {
      const item = h('span', 'kg-legend-item kg-legend-mark');
      item.setAttribute('data-mark', mark);
      item.title = MARK_TEXT[mark] ?? mark;
      item.append(h('span', 'kg-swatch'), document.createTextNode(mark));
      this.legendEl.appendChild(item);
    }
    // Step-through: what the green and the dashed outline mean.
    if (this.fullDoc.stepper) {
      for (const [cls, text] of [
        ['kg-legend-ran', 'has run'],
        ['kg-legend-next', 'runs next']
      ]) {
        const item = h('span', `kg-legend-item ${cls}`);
        item.append(h('span', 'kg-swatch'), document.createTextNode(text));
        this.legendEl.appendChild(item);
      }
    }
    // Placement: a chip per non-CPU device, matching the thick outline of its nodes.
    for (const device of new Set(doc.nodes.map(n => n.device).filter(d => d !== 'cpu'))) {
      const item = h('span', 'kg-legend-item kg-legend-device');
      item.setAttribute('data-device', device);
      item.append(h('span', 'kg-swatch'), document.createTextNode(device));
      this.legendEl.appendChild(item);
    }
    // Gradient colour scale.
    const range = this.timeline.logNormRange;
    this.gradLegendEl.replaceChildren();
    this.gradLegendEl.style.display = range ? '' : 'none';
    if (range) {
      const bar = h('span', 'kg-grad-bar');
      const stops = [0, 0.25, 0.5, 0.75, 1].map(t => gradRamp(t)).join(', ');
      bar.style.background = `linear-gradient(to right, ${stops})`;
      this.gradLegendEl.append(
        h('span', 'kg-grad-title', 'gradient norm (log scale)'),
        h('span', 'kg-grad-min', shortNumber(10 ** range[0])),
        bar,
        h('span', 'kg-grad-max', shortNumber(10 ** range[1]))
      );
    }
    this.scrub.max = String(this.timeline.length);
    this.scrub.disabled = this.timeline.length === 0;
  }

  private isLastStage(): boolean {
    const compiler = this.fullDoc.compiler;
    return compiler !== null && this.stage === defaultStage({ ...compiler, selected: -1 });
  }

  /** The pass selector and what the pass shown changed (above the drawing). */
  private updateCompilerBar(): void {
    const compiler = this.fullDoc.compiler;
    this.compilerEl.replaceChildren();
    this.compilerEl.style.display = compiler ? '' : 'none';
    if (!compiler) {
      this.compilerEl.removeAttribute('data-stage');
      return;
    }
    this.compilerEl.setAttribute('data-stage', this.stageName ?? '');
    const bar = h('div', 'kg-stages');
    bar.setAttribute('role', 'tablist');
    compiler.stages.forEach((stage, i) => {
      const b = button('kg-stage', stage.name, '');
      b.setAttribute('data-stage', stage.name);
      b.setAttribute('role', 'tab');
      const selected = i === this.stage;
      b.setAttribute('aria-selected', String(selected));
      b.classList.toggle('kg-stage-selected', selected);
      if (stage.skipped || !drawable(compiler, i)) {
        b.disabled = true;
        b.classList.add('kg-stage-skipped');
        b.title = stage.skipped ? `${stage.name} was switched off (Session(skip_passes=...))` : 'nothing to draw';
        b.appendChild(h('span', 'kg-stage-count', 'off'));
      } else {
        const count = stage.after ?? 0;
        b.title = i === 0 || stage.before === null ? `${count} nodes` : `${stage.before} \u2192 ${count} nodes, ${stage.changes.length} changes`;
        b.appendChild(h('span', 'kg-stage-count', String(count)));
        b.addEventListener('click', () => this.selectStage(i));
      }
      bar.appendChild(b);
    });
    this.compilerEl.appendChild(bar);

    const stage = compiler.stages[this.stage];
    if (!stage) {
      return;
    }
    const info = h('div', 'kg-stage-info');
    let summary = stage.name;
    if (stage.before !== null && stage.after !== null && this.stage > 0) {
      summary += `: ${stage.before} \u2192 ${stage.after} nodes`;
    } else if (stage.after !== null) {
      summary += `: ${stage.after} nodes`;
    }
    if (stage.seconds !== null && this.stage > 0) {
      summary += ` in ${formatSeconds(stage.seconds)}`;
    }
    info.appendChild(h('span', 'kg-stage-summary', summary));
    if (!compiler.optimized) {
      info.appendChild(h('span', 'kg-skipped', 'passes off: Session(optimize=False)'));
    } else if (compiler.skipped.length > 0) {
      info.appendChild(h('span', 'kg-skipped', `skipped: ${compiler.skipped.join(', ')}`));
    }
    const list = h('ul', 'kg-changes');
    const shown = stage.changes.slice(0, 30);
    for (const change of shown) {
      list.appendChild(h('li', 'kg-change', change));
    }
    if (stage.changes.length > shown.length) {
      list.appendChild(h('li', 'kg-change kg-more', `\u2026 and ${stage.changes.length - shown.length} more`));
    }
    if (stage.changes.length === 0 && this.stage > 0) {
      list.appendChild(h('li', 'kg-change kg-none', 'no rewrites'));
    }
    if (stage.ghostsOmitted > 0) {
      list.appendChild(h('li', 'kg-change kg-more', `${stage.ghostsOmitted} more removed nodes not drawn`));
    }
    info.appendChild(list);
    this.compilerEl.appendChild(info);
  }

  /** Compile vs run time, the memory plan, the fused kernels and the plan (below). */
  private buildCompilerDetails(): void {
    const compiler = this.fullDoc.compiler;
    // Keep what the learner opened when the same view is updated.
    const opened = new Set<string>();
    for (const d of Array.from(this.compilerDetailsEl.querySelectorAll('details'))) {
      if ((d as HTMLDetailsElement).open) {
        opened.add(d.getAttribute('data-key') ?? '');
      }
    }
    this.compilerDetailsEl.replaceChildren();
    this.compilerDetailsEl.style.display = compiler ? '' : 'none';
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
    // Times: compile and one run, as bars of the larger one's length.
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
      const row = h('div', 'kg-bar-row');
      row.setAttribute('data-what', name);
      const track = h('span', 'kg-bar-track');
      const fill = h('span', `kg-bar-fill kg-bar-${name}`);
      fill.style.width = `${seconds === null ? 0 : Math.max(1, (100 * seconds) / longest)}%`;
      track.appendChild(fill);
      row.append(h('span', 'kg-bar-name', name), track, h('span', 'kg-bar-value', seconds === null ? 'n/a' : formatSeconds(seconds)));
      if (note) {
        row.appendChild(h('span', 'kg-bar-note', note));
      }
      timing.appendChild(row);
    }
    stats.appendChild(timing);
    const memory = compiler.memory;
    if (memory) {
      const box = h('div', 'kg-memory');
      const row = h('div', 'kg-bar-row');
      const track = h('span', 'kg-bar-track');
      const fill = h('span', 'kg-bar-fill kg-bar-memory');
      const buffers = `${memory.buffers} buffer${memory.buffers === 1 ? '' : 's'}, ${memory.inPlace.size} computed in place`;
      track.appendChild(fill);
      if (memory.peakBytes !== null && memory.naiveBytes !== null && memory.naiveBytes > 0) {
        const share = memory.peakBytes / memory.naiveBytes;
        fill.style.width = `${Math.max(1, Math.min(100, 100 * share))}%`;
        row.append(h('span', 'kg-bar-name', 'memory'), track, h('span', 'kg-bar-value', `peak ${formatBytes(memory.peakBytes)}`));
        row.appendChild(
          h('span', 'kg-bar-note', `${Math.round(100 * share)}% of ${formatBytes(memory.naiveBytes)} without reuse; ${buffers}`)
        );
      } else {
        fill.style.width = '0%';
        row.append(h('span', 'kg-bar-name', 'memory'), track, h('span', 'kg-bar-value', 'n/a'));
        row.appendChild(h('span', 'kg-bar-note', `bytes unknown (some shapes only known at run time); ${buffers}`));
      }
      box.appendChild(row);
      stats.appendChild(box);
    }
    this.compilerDetailsEl.appendChild(stats);
    if (compiler.kernels.length > 0) {
      const all = details('kernels', 'kg-kernels', `fused kernels (${compiler.kernels.length})`);
      for (const k of compiler.kernels) {
        const one = details(`kernel:${k.id}`, 'kg-kernel', `${k.kernel} computes ${k.name}: ${k.members.join(' \u2192 ')}`);
        one.setAttribute('data-group', k.id);
        one.appendChild(h('pre', 'kg-source', k.source));
        all.appendChild(one);
      }
      this.compilerDetailsEl.appendChild(all);
    }
    if (compiler.planSource) {
      const plan = details('plan', 'kg-plan', 'generated plan (one line per node)');
      plan.appendChild(h('pre', 'kg-source', compiler.planSource));
      this.compilerDetailsEl.appendChild(plan);
    }
  }

  /** Where a step-through run stands, and its buttons when a kernel drives it. */
  private updateStepper(): void {
    const stepper = this.fullDoc.stepper;
    this.stepperEl.replaceChildren();
    this.stepperEl.style.display = stepper ? '' : 'none';
    if (!stepper) {
      return;
    }
    const act = this.options.onAction;
    const stopped = stepper.done || stepper.error !== null;
    if (act) {
      const next = button('kg-step-next', 'Step', 'Run the next node');
      const run = button('kg-step-run', 'Run to end', 'Run every node left');
      const reset = button('kg-step-reset', 'Reset', 'Start the run again');
      next.disabled = stopped;
      run.disabled = stopped;
      next.addEventListener('click', () => act('step'));
      run.addEventListener('click', () => act('run'));
      reset.addEventListener('click', () => act('reset'));
      this.stepperEl.append(next, run, reset);
    }
    const name = (id: string | null): string => (id !== null ? this.doc.byId.get(id)?.name ?? id : '');
    let status = `${stepper.position} / ${stepper.total} nodes run`;
    if (stepper.error !== null) {
      status += ` \u00b7 stopped at ${name(stepper.errorNode)}`;
    } else if (stepper.done) {
      status += ' \u00b7 done';
    } else if (stepper.next !== null) {
      status += ` \u00b7 next: ${name(stepper.next)}`;
    }
    if (stepper.optimized) {
      status += ' (compiled order)';
    }
    const statusEl = h('span', 'kg-stepper-status', status);
    statusEl.setAttribute('data-position', String(stepper.position));
    this.stepperEl.appendChild(statusEl);
    if (act && !stopped) {
      this.stepperEl.appendChild(h('span', 'kg-stepper-hint', 'click a node to run up to it'));
    }
    const text = stepper.error ?? this.message;
    if (text) {
      this.stepperEl.appendChild(h('pre', 'kg-stepper-error', text));
    }
  }

  private updateMatches(): void {
    this.matches = new Set();
    if (this.query !== '') {
      for (const node of this.doc.nodes) {
        if (node.name.toLowerCase().includes(this.query)) {
          this.matches.add(node.id);
        }
      }
    }
    this.searchCount.textContent =
      this.query === '' ? '' : `${this.matches.size} match${this.matches.size === 1 ? '' : 'es'}`;
  }

  /** Expand the scopes holding search matches and centre the first match. */
  private revealMatches(): void {
    if (this.matches.size === 0) {
      return;
    }
    const scopes = new Set<string>();
    for (const id of this.matches) {
      const node = this.doc.byId.get(id);
      if (node && this.collapsed.has(node.topScope)) {
        scopes.add(node.topScope);
      }
    }
    if (scopes.size > 0) {
      this.collapsed = new Set([...this.collapsed].filter(s => !scopes.has(s)));
      this.layout = null;
      this.render(true);
    }
    const first = this.doc.nodes.find(n => this.matches.has(n.id));
    const box = first && this.layout ? this.layout.boxById.get(this.layout.boxOfNode.get(first.id)!) : undefined;
    const width = this.canvas.clientWidth;
    const height = Number(this.svg.attr('height'));
    if (box && width > 0) {
      this.userZoomed = true;
      const t = zoomIdentity.translate(width / 2 - box.x, height / 2 - box.y);
      this.svg.transition('zoom').duration(400).call(this.zoomBehavior.transform as any, t);
    }
  }

  /** Draw the current document at the current step. */
  private render(relayout: boolean): void {
    if (this.disposed) {
      return;
    }
    let moved = false;
    if (relayout || !this.layout) {
      moved = true;
      this.layout = computeLayout(this.doc, this.collapsed);
    }
    this.state = stateAt(this.timeline, this.step);
    this.updateControls();
    this.drawClusters(moved);
    this.drawEdges(moved);
    this.drawBoxes(moved);
    this.emptyEl.style.display = this.doc.nodes.length === 0 ? '' : 'none';
    if (moved && !this.userZoomed) {
      this.fit(false);
    }
    if (this.hovered) {
      const fresh = this.layout.boxById.get(this.hovered.id);
      if (fresh) {
        this.fillTooltip(fresh);
      }
    }
  }

  private updateControls(): void {
    const n = this.timeline.length;
    const st = this.state;
    this.scrub.max = String(n);
    this.scrub.value = String(this.step);
    this.counter.textContent = `step ${this.step} / ${n}`;
    this.phaseEl.textContent = st.phase;
    this.phaseEl.setAttribute('data-phase', st.phase);
    const node = st.active ? this.doc.byId.get(st.active) : undefined;
    let text = node ? node.name : '';
    if (node && st.seconds !== null) {
      text += ` (${formatSeconds(st.seconds)})`;
    }
    this.stepNodeEl.textContent = text;
  }

  private boxVisible(box: Box): boolean {
    const visible = this.state.visible;
    return visible === null || box.members.some(id => visible.has(id));
  }

  private edgeVisible(edge: LaidEdge): boolean {
    const visible = this.state.visible;
    if (visible === null) {
      return true;
    }
    return edge.members.some(i => {
      const e = this.doc.edges[i];
      return visible.has(e.source) && visible.has(e.target);
    });
  }

  private drawClusters(moved: boolean): void {
    const layout = this.layout!;
    const shown = new Set<string>();
    for (const b of layout.boxes) {
      if (b.type === 'node' && b.scope !== '' && !shown.has(b.scope) && this.boxVisible(b)) {
        shown.add(b.scope);
      }
    }
    const data = layout.clusters.filter(c => shown.has(c.scope));
    const dur = this.duration();
    const sel = this.clusterLayer
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
    enter.on('click', (event: MouseEvent, d: Cluster) => {
      event.stopPropagation();
      const group = this.doc.groups.get(d.scope);
      if (group) {
        this.showKernel(group.id);
      } else {
        this.toggleScope(d.scope);
      }
    });
    enter.append('title');
    const all = enter.merge(sel);
    all.classed('kg-fused-group', d => this.doc.groups.has(d.scope));
    all.each((d, i, nodes) => {
      const group = this.doc.groups.get(d.scope);
      if (group) {
        nodes[i].setAttribute('data-group', group.id);
      } else {
        nodes[i].removeAttribute('data-group');
      }
    });
    all
      .select<SVGTitleElement>('title')
      .text(d => (this.doc.groups.has(d.scope) ? 'Click to show the generated kernel' : 'Click to collapse this scope'));
    all.select<SVGTextElement>('text.kg-cluster-label').text(d => {
      const group = this.doc.groups.get(d.scope);
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

  private edgePath(points: Point[]): string {
    return line<Point>()
      .x(p => p.x)
      .y(p => p.y)
      .curve(curveBasis)(points) ?? '';
  }

  private drawEdges(moved: boolean): void {
    const layout = this.layout!;
    const st = this.state;
    const data = layout.edges.filter(e => this.edgeVisible(e));
    const dur = this.duration();
    const activeBox = st.active ? layout.boxOfNode.get(st.active) : undefined;
    const sel = this.edgeLayer
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
    enter.select('path').attr('d', d => this.edgePath(d.points));
    enter
      .select<SVGTextElement>('text')
      .attr('x', d => d.labelX)
      .attr('y', d => d.labelY);
    enter.transition('fade').duration(dur).style('opacity', 1);
    if (moved) {
      sel.select('path').transition('move').duration(dur).attr('d', d => this.edgePath(d.points));
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
        const pos = this.timeline.normPosition(norm);
        g.setAttribute('data-grad-norm', String(norm));
        path.style.stroke = gradColour(pos);
        path.style.strokeWidth = `${1.5 + 2.5 * Math.max(0, Math.min(1, pos ?? 0.5))}px`;
        path.setAttribute('marker-end', `url(#${this.uid}-arrow-grad)`);
      } else {
        g.removeAttribute('data-grad-norm');
        path.style.stroke = '';
        path.style.strokeWidth = '';
        path.setAttribute('marker-end', `url(#${this.uid}-arrow${active ? '-active' : ''})`);
      }
    });
  }

  private drawBoxes(moved: boolean): void {
    const layout = this.layout!;
    const data = layout.boxes.filter(b => this.boxVisible(b));
    const dur = this.duration();
    const sel = this.nodeLayer
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
      .on('mouseenter', (event: MouseEvent, d: Box) => {
        this.hovered = d;
        this.fillTooltip(d);
        this.moveTooltip(event);
      })
      .on('mousemove', (event: MouseEvent) => this.moveTooltip(event))
      .on('mouseleave', () => {
        this.hovered = null;
        this.tooltip.style.display = 'none';
      })
      .on('click', (event: MouseEvent, d: Box) => {
        if (d.type === 'scope') {
          event.stopPropagation();
          this.hovered = null;
          this.tooltip.style.display = 'none';
          this.toggleScope(d.scope);
        } else if (this.doc.stepper && this.options.onAction && d.node) {
          // Step-through: run up to the clicked node (one that has not run yet).
          if (!this.state.executed.has(d.node.id) && this.doc.stepper.order.includes(d.node.id)) {
            event.stopPropagation();
            this.options.onAction('run_to', d.node.id);
          }
        }
      });
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
    enter.merge(sel).each((d, i, nodes) => this.updateBox(nodes[i], d));
  }

  /** Texts and highlight classes of one box, touched only when they change. */
  private updateBox(g: SVGGElement, box: Box): void {
    const st = this.state;
    const searching = this.query !== '';
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
      node = this.doc.byId.get(box.node!.id) ?? box.node!;
      box.node = node;
      const stepper = this.doc.stepper;
      if (stepper) {
        const atEnd = this.step >= this.timeline.length;
        flags += st.executed.has(node.id) ? 'e' : '';
        flags += atEnd && stepper.next === node.id ? 'n' : '';
        flags += atEnd && stepper.errorNode === node.id ? 'f' : '';
      }
      active = st.active === node.id;
      match = this.matches.has(node.id);
      label = fitText(node.label, Math.floor((box.width - 12) / 7));
      value = fitText(st.values.get(node.id) ?? '', chars);
      if (GRAD_KINDS.has(node.kind) && st.grads.has(node.id)) {
        grad = fitText(st.grads.get(node.id)!, chars);
      }
    } else {
      active = st.active !== null && box.members.includes(st.active);
      match = searching && box.members.some(id => this.matches.has(id));
      label = fitText(box.scope, Math.floor((box.width - 34) / 7));
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
        gradEl = document.createElementNS('http://www.w3.org/2000/svg', 'text');
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

  private fillTooltip(box: Box): void {
    const rows: [string, string][] = [];
    const st = this.state;
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
      const memory = this.fullDoc.compiler?.memory;
      if (memory && this.isLastStage() && memory.slots.has(node.id)) {
        const inPlace = memory.inPlace.has(node.id) ? ' (in place)' : '';
        rows.push(['buffer', `#${memory.slots.get(node.id)}${inPlace}`]);
      }
      if (this.doc.stepper && st.executed.has(node.id)) {
        rows.push(['run', 'this node has run']);
      }
      if (st.active === node.id && st.seconds !== null) {
        rows.push(['time', formatSeconds(st.seconds)]);
      }
    } else {
      const ops = new Map<string, number>();
      for (const id of box.members) {
        const op = this.doc.byId.get(id)?.op || '?';
        ops.set(op, (ops.get(op) ?? 0) + 1);
      }
      const summary = [...ops]
        .sort((a, b) => b[1] - a[1])
        .slice(0, 6)
        .map(([op, c]) => `${op} \u00d7${c}`)
        .join(', ');
      rows.push(['scope', box.scope], ['nodes', String(box.members.length)], ['ops', summary], ['', 'click to expand']);
    }
    const table = h('table', 'kg-tooltip-table');
    for (const [key, value] of rows) {
      const tr = h('tr', '');
      tr.append(h('th', '', key), h('td', '', value));
      table.appendChild(tr);
    }
    this.tooltip.replaceChildren(table);
    this.tooltip.style.display = '';
  }

  private moveTooltip(event: MouseEvent): void {
    const rect = this.canvas.getBoundingClientRect();
    const x = event.clientX - rect.left + 14;
    const y = event.clientY - rect.top + 14;
    const maxX = Math.max(0, rect.width - this.tooltip.offsetWidth - 4);
    this.tooltip.style.left = `${Math.min(x, maxX)}px`;
    this.tooltip.style.top = `${y}px`;
  }
}

/** Render `doc` into `container`; returns the renderer (call `dispose()` to remove it). */
export function renderGraph(
  container: HTMLElement,
  doc: unknown,
  options: RendererOptions & SetDocumentOptions = {}
): GraphRenderer {
  const r = new GraphRenderer(container, options);
  r.setDocument(doc, { step: options.step });
  return r;
}
