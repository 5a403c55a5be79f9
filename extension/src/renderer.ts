/**
 * The one graph renderer, used by the ipywidgets view and the MIME renderer.
 *
 *     const r = new GraphRenderer(container);
 *     r.setDocument(doc);          // a document of kernelgraph/widgets/SCHEMA.md
 *     r.setStep(3);                // show the state after 3 steps
 *
 * This module keeps the parts in step with what is shown (./view-model: the document, the
 * compiler stage, the step, collapsed scopes, the search): the controls (./controls), the
 * drawing (./canvas, ./draw-links, ./draw-boxes), the animation clock (./playback), the
 * legend, the tooltip, and the compiler and step-through panels.
 *
 * Safety: every string of the document reaches the page through `textContent`
 * (d3 `.text()`) or an attribute value (`setAttribute`, d3 `.attr()`); nothing
 * is parsed as HTML, and no document string is used in a CSS selector.
 */
import { downloadSvg, GraphCanvas } from './canvas';
import { updateCompilerBar } from './compiler-bar';
import { buildCompilerDetails, openKernel } from './compiler-details';
import { buildControls, Controls, showStep, showTitle } from './controls';
import { h } from './dom';
import { drawBoxes } from './draw-boxes';
import { DrawContext, DrawEvents, drawClusters, drawEdges } from './draw-links';
import { Box, computeLayout, Layout, topScopes } from './layout';
import { addLegendStyle, updateGradLegend, updateLegend } from './legend';
import { Playback } from './playback';
import { GraphDocument } from './schema';
import { stateAt, StepState } from './state';
import { StepAction, updateStepperBar } from './stepper-bar';
import { Tooltip, tooltipRows } from './tooltip';
import { SetDocumentOptions, ViewModel } from './view-model';

export { fitText } from './dom';
export type { StepAction } from './stepper-bar';
export type { SetDocumentOptions } from './view-model';

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

/** Draws one graph document with its animation controls into a container element. */
export class GraphRenderer {
  /** The root element (`.kg-graph`), appended to the container. */
  readonly root: HTMLDivElement;

  private readonly options: RendererOptions;
  private readonly view: ViewModel;
  private message = '';
  private state: StepState;
  private layout: Layout | null = null;
  private disposed = false;
  private hovered: Box | null = null;

  private readonly controls: Controls;
  private readonly canvas: GraphCanvas;
  private readonly tooltip: Tooltip;
  private readonly playback: Playback;
  private readonly events: DrawEvents;
  private readonly gradLegendEl: HTMLElement;
  private readonly compilerEl: HTMLElement;
  private readonly compilerDetailsEl: HTMLElement;
  private readonly stepperEl: HTMLElement;
  private readonly emptyEl: HTMLElement;
  private readonly resizeObserver: ResizeObserver | null = null;

  constructor(container: HTMLElement, options: RendererOptions = {}) {
    this.options = options;
    this.view = new ViewModel(options);
    this.state = stateAt(this.view.timeline, 0);
    this.canvas = new GraphCanvas();
    const root = (this.root = h('div', 'kg-graph'));
    root.tabIndex = -1;
    this.playback = new Playback(root, {
      currentStep: () => this.view.step,
      stepCount: () => this.view.timeline.length,
      disposed: () => this.disposed,
      changeStep: step => this.changeStep(step)
    });
    this.controls = buildControls({
      back: () => {
        this.pause();
        this.changeStep(this.view.step - 1);
      },
      forward: () => {
        this.pause();
        this.changeStep(this.view.step + 1);
      },
      play: () => this.play(),
      pause: () => this.pause(),
      speed: speed => this.playback.setSpeed(speed),
      scrub: step => {
        this.pause();
        this.changeStep(step);
      },
      search: query => this.setQuery(query),
      reveal: () => this.revealMatches(),
      expandAll: () => this.setCollapsed([]),
      collapseAll: () => this.setCollapsed(topScopes(this.view.doc).keys()),
      fit: () => {
        this.canvas.userZoomed = false;
        this.fit(true, true);
      },
      exportSvg: () => this.downloadSvg()
    });
    this.events = {
      clusterClick: cluster => {
        const group = this.view.doc.groups.get(cluster.scope);
        if (group) {
          this.showKernel(group.id);
        } else {
          this.toggleScope(cluster.scope);
        }
      },
      boxEnter: (event, box) => {
        this.hovered = box;
        this.fillTooltip(box);
        this.tooltip.move(event, this.canvas.el);
      },
      boxMove: event => this.tooltip.move(event, this.canvas.el),
      boxLeave: () => {
        this.hovered = null;
        this.tooltip.hide();
      },
      boxClick: (event, box) => this.boxClick(event, box)
    };

    this.tooltip = new Tooltip();
    this.emptyEl = h('div', 'kg-empty', 'empty graph');
    this.gradLegendEl = h('div', 'kg-grad-legend');
    this.canvas.el.append(this.emptyEl, this.tooltip.el);
    this.compilerEl = h('div', 'kg-compiler');
    this.compilerDetailsEl = h('div', 'kg-compiler-details');
    this.stepperEl = h('div', 'kg-stepper');
    root.append(
      this.controls.header,
      this.controls.toolbar,
      this.stepperEl,
      this.compilerEl,
      this.canvas.el,
      this.gradLegendEl,
      this.compilerDetailsEl
    );
    container.appendChild(root);
    addLegendStyle(root);

    if (typeof ResizeObserver !== 'undefined') {
      this.resizeObserver = new ResizeObserver(() => {
        const w = this.canvas.el.clientWidth;
        if (w > 0 && w !== this.canvas.lastWidth && !this.canvas.userZoomed) {
          this.fit(false);
        }
      });
      this.resizeObserver.observe(this.canvas.el);
    }
    this.render(true);
  }

  /** The normalized document drawn (for a compiler view: the stage shown). */
  get document(): GraphDocument {
    return this.view.doc;
  }

  /** The compiler stage shown (its pass name, or "as written"); null for a plain graph. */
  get stageShown(): string | null {
    return this.view.stageName;
  }

  /** Steps applied so far (0..stepCount). */
  get currentStep(): number {
    return this.view.step;
  }

  get stepCount(): number {
    return this.view.timeline.length;
  }

  get isPlaying(): boolean {
    return this.playback.isPlaying;
  }

  /** Top-level scopes drawn as one box. */
  get collapsedScopes(): ReadonlySet<string> {
    return this.view.collapsed;
  }

  /** Show a new document (replacing the old one as a whole). */
  setDocument(raw: unknown, options: SetDocumentOptions = {}): void {
    this.view.setDocument(raw, options);
    if (this.playback.isPlaying && this.view.step >= this.view.timeline.length) {
      this.pause();
    }
    this.updateHeader();
    buildCompilerDetails(this.compilerDetailsEl, this.view.fullDoc.compiler);
    this.updateCompilerBar();
    this.updateStepper();
    this.updateSearchCount();
    this.layout = null;
    this.render(true);
  }

  /**
   * Show one stage of a compiler view: its index or its name ("as written", "prune",
   * "fold_constants", ...). Skipped passes have no stage to show.
   */
  selectStage(which: number | string): void {
    if (!this.view.selectStage(which)) {
      return;
    }
    this.hovered = null;
    this.tooltip.hide();
    this.updateHeader();
    this.updateCompilerBar();
    this.updateSearchCount();
    this.layout = null;
    this.canvas.userZoomed = false;
    this.render(true);
  }

  /** A line for the learner under the stepper bar (the widget's `message`). */
  setMessage(text: string): void {
    this.message = text;
    this.updateStepper();
  }

  /** Open the generated source of the fused kernel computing node `id`. */
  showKernel(id: string): void {
    openKernel(this.compilerDetailsEl, id);
  }

  /** Show the state after `step` steps (clamped); does not call `onStepChange`. */
  setStep(step: number | null | undefined): void {
    const n = this.view.timeline.length;
    const s =
      typeof step === 'number' && Number.isFinite(step) && step >= 0 ? Math.min(Math.floor(step), n) : n;
    if (s !== this.view.step) {
      this.view.step = s;
      this.render(false);
    }
  }

  play(): void {
    this.playback.play();
  }

  pause(): void {
    this.playback.pause();
  }

  /** Collapse exactly the given top-level scopes. */
  setCollapsed(scopes: Iterable<string>): void {
    this.view.setCollapsed(scopes);
    this.layout = null;
    this.canvas.userZoomed = false;
    this.render(true);
  }

  toggleScope(scope: string): void {
    this.view.toggleScope(scope);
    this.layout = null;
    this.render(true);
  }

  /** Highlight nodes whose name contains `query` (case-insensitive). */
  setQuery(query: string): void {
    this.view.setQuery(query);
    const input = this.controls.searchInput;
    if (input.value.trim().toLowerCase() !== this.view.query) {
      input.value = query;
    }
    this.updateSearchCount();
    this.render(false);
  }

  /** The current drawing as a standalone SVG document. */
  toSvgString(): string {
    const { doc, step, timeline } = this.view;
    const caption = `${doc.title}  (step ${step} / ${timeline.length})`.trim();
    return this.canvas.toSvgString(this.layout, doc.title || 'kernelgraph', caption);
  }

  /** Download `toSvgString()` as a file. */
  downloadSvg(): void {
    downloadSvg(this.toSvgString(), this.view.doc.title);
  }

  /**
   * Fit the graph into the view: all of it with `whole`, else no smaller than
   * a readable scale (a tall graph then shows its top; drag to pan, Ctrl+wheel to zoom).
   */
  fit(animate: boolean, whole = false): void {
    this.canvas.fit(this.layout, animate, whole);
  }

  dispose(): void {
    if (this.disposed) {
      return;
    }
    this.disposed = true;
    this.pause();
    this.resizeObserver?.disconnect();
    this.canvas.dispose();
    this.root.remove();
  }

  // ---------------------------------------------------------------- internals

  /** A step change made in the view: draw it and tell the owner. */
  private changeStep(step: number): void {
    const n = this.view.timeline.length;
    const s = Math.max(0, Math.min(n, Math.floor(step)));
    if (s === this.view.step) {
      return;
    }
    this.view.step = s;
    this.render(false);
    this.options.onStepChange?.(s);
  }

  private updateHeader(): void {
    const { doc, fullDoc, timeline } = this.view;
    showTitle(this.controls, doc);
    this.root.classList.toggle('kg-has-compiler', fullDoc.compiler !== null);
    this.root.classList.toggle('kg-has-stepper', fullDoc.stepper !== null);
    updateLegend(this.controls.legendEl, doc, fullDoc.stepper !== null);
    updateGradLegend(this.gradLegendEl, timeline.logNormRange);
    this.controls.scrub.max = String(timeline.length);
    this.controls.scrub.disabled = timeline.length === 0;
  }

  private updateCompilerBar(): void {
    const { fullDoc, stage, stageName } = this.view;
    updateCompilerBar(this.compilerEl, fullDoc.compiler, stage, stageName, i => this.selectStage(i));
  }

  private updateStepper(): void {
    updateStepperBar(this.stepperEl, this.view.fullDoc.stepper, this.view.doc, this.message, this.options.onAction);
  }

  private updateSearchCount(): void {
    const { query, matches } = this.view;
    this.controls.searchCount.textContent =
      query === '' ? '' : `${matches.size} match${matches.size === 1 ? '' : 'es'}`;
  }

  /** Expand the scopes holding search matches and centre the first match. */
  private revealMatches(): void {
    if (this.view.matches.size === 0) {
      return;
    }
    if (this.view.expandMatches()) {
      this.layout = null;
      this.render(true);
    }
    const first = this.view.firstMatch();
    const box = first && this.layout ? this.layout.boxById.get(this.layout.boxOfNode.get(first.id)!) : undefined;
    if (box) {
      this.canvas.centreOn(box.x, box.y);
    }
  }

  /** Draw the current document at the current step. */
  private render(relayout: boolean): void {
    if (this.disposed) {
      return;
    }
    const view = this.view;
    let moved = false;
    if (relayout || !this.layout) {
      moved = true;
      this.layout = computeLayout(view.doc, view.collapsed);
    }
    this.state = stateAt(view.timeline, view.step);
    showStep(this.controls, view.doc, view.step, view.timeline.length, this.state);
    const ctx: DrawContext = {
      canvas: this.canvas,
      layout: this.layout,
      doc: view.doc,
      timeline: view.timeline,
      state: this.state,
      step: view.step,
      query: view.query,
      matches: view.matches,
      duration: this.playback.duration(),
      events: this.events
    };
    drawClusters(ctx, moved);
    drawEdges(ctx, moved);
    drawBoxes(ctx, moved);
    this.emptyEl.style.display = view.doc.nodes.length === 0 ? '' : 'none';
    if (moved && !this.canvas.userZoomed) {
      this.fit(false);
    }
    if (this.hovered) {
      const fresh = this.layout.boxById.get(this.hovered.id);
      if (fresh) {
        this.fillTooltip(fresh);
      }
    }
  }

  /** A click on a box: a scope opens; in a step-through run, a node not yet run is run to. */
  private boxClick(event: MouseEvent, box: Box): void {
    const stepper = this.view.doc.stepper;
    if (box.type === 'scope') {
      event.stopPropagation();
      this.hovered = null;
      this.tooltip.hide();
      this.toggleScope(box.scope);
    } else if (stepper && this.options.onAction && box.node) {
      if (!this.state.executed.has(box.node.id) && stepper.order.includes(box.node.id)) {
        event.stopPropagation();
        this.options.onAction('run_to', box.node.id);
      }
    }
  }

  private fillTooltip(box: Box): void {
    const memory = this.view.isLastStage() ? (this.view.fullDoc.compiler?.memory ?? null) : null;
    this.tooltip.show(tooltipRows(box, { doc: this.view.doc, state: this.state, memory }));
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
