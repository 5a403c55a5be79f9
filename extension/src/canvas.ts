/**
 * The drawing surface: the SVG with its own stylesheet, arrow markers and layers (scope
 * clusters under edges under boxes), panning and zooming, fitting a layout into the view,
 * and the drawing as a standalone SVG file.
 */
import { select, Selection } from 'd3-selection';
import 'd3-transition';
import { D3ZoomEvent, zoom, ZoomBehavior, zoomIdentity } from 'd3-zoom';

import { h, SVG_NS } from './dom';
import { Layout } from './layout';
import { SVG_STYLE } from './svg-style';

export type GSel<D> = Selection<SVGGElement, D, any, any>;

const PAD = 16;
const MIN_HEIGHT = 120;
const MAX_HEIGHT = 600;
/** The automatic fit shrinks the drawing no further than this. */
const MIN_FIT_SCALE = 0.45;

let instances = 0;

/** The `.kg-canvas` element: the SVG drawing, with room for overlays (empty note, tooltip). */
export class GraphCanvas {
  readonly el: HTMLDivElement;
  /** Unique per drawing on the page: the arrow markers' ids start with it. */
  readonly uid: string;
  readonly svg: Selection<SVGSVGElement, unknown, null, undefined>;
  readonly clusterLayer: GSel<unknown>;
  readonly edgeLayer: GSel<unknown>;
  readonly nodeLayer: GSel<unknown>;
  /** The learner moved the view: automatic fits leave it alone. */
  userZoomed = false;
  /** Canvas width at the last fit. */
  lastWidth = 0;
  private readonly viewport: GSel<unknown>;
  private readonly zoomBehavior: ZoomBehavior<SVGSVGElement, unknown>;

  constructor() {
    this.uid = `kg${++instances}`;
    this.el = h('div', 'kg-canvas');
    const svgEl = document.createElementNS(SVG_NS, 'svg');
    this.svg = select(svgEl).attr('class', 'kg-svg').attr('width', '100%').attr('height', MIN_HEIGHT);
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
    this.el.append(svgEl);
  }

  /** The id of an arrow marker: '' (plain), '-grad' or '-active'. */
  arrow(suffix: string): string {
    return `url(#${this.uid}-arrow${suffix})`;
  }

  /**
   * Fit `layout` into the view: all of it with `whole`, else no smaller than
   * a readable scale (a tall graph then shows its top; drag to pan, Ctrl+wheel to zoom).
   */
  fit(layout: Layout | null, animate: boolean, whole = false): void {
    const width = this.el.clientWidth;
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

  /** Move the view (at scale 1) so that the point (x, y) of the layout is in its centre. */
  centreOn(x: number, y: number): void {
    const width = this.el.clientWidth;
    const height = Number(this.svg.attr('height'));
    if (width > 0) {
      this.userZoomed = true;
      const t = zoomIdentity.translate(width / 2 - x, height / 2 - y);
      this.svg.transition('zoom').duration(400).call(this.zoomBehavior.transform as any, t);
    }
  }

  /** The drawing of `layout` as a standalone SVG document, with a title and a caption. */
  toSvgString(layout: Layout | null, title: string, caption: string): string {
    const clone = this.svg.node()!.cloneNode(true) as SVGSVGElement;
    for (const gone of Array.from(clone.querySelectorAll('.kg-exiting'))) {
      gone.remove();
    }
    const w = Math.ceil((layout?.width ?? 0) + 2 * PAD);
    const hgt = Math.ceil((layout?.height ?? 0) + 2 * PAD + 24);
    clone.setAttribute('width', String(w));
    clone.setAttribute('height', String(hgt));
    clone.setAttribute('viewBox', `${-PAD} ${-PAD - 24} ${w} ${hgt}`);
    clone.querySelector('.kg-viewport')?.removeAttribute('transform');
    const titleEl = document.createElementNS(SVG_NS, 'title');
    titleEl.textContent = title;
    clone.insertBefore(titleEl, clone.firstChild);
    const captionEl = document.createElementNS(SVG_NS, 'text');
    captionEl.setAttribute('x', '0');
    captionEl.setAttribute('y', '-10');
    captionEl.setAttribute('class', 'kg-label');
    captionEl.setAttribute('style', 'text-anchor: start');
    captionEl.textContent = caption;
    clone.appendChild(captionEl);
    return new XMLSerializer().serializeToString(clone);
  }

  /** Stop the view's own animation (the renderer is going away). */
  dispose(): void {
    this.svg.interrupt('zoom');
  }
}

/** Save `text` as an SVG file called `title` (made safe for a file name). */
export function downloadSvg(text: string, title: string): void {
  const blob = new Blob([text], { type: 'image/svg+xml' });
  const url = URL.createObjectURL(blob);
  const a = document.createElement('a');
  const base = title.replace(/[^A-Za-z0-9_-]+/g, '_').replace(/^_+|_+$/g, '');
  a.href = url;
  a.download = `${(base || 'kernelgraph').slice(0, 60)}.svg`;
  a.style.display = 'none';
  document.body.appendChild(a);
  a.click();
  a.remove();
  window.setTimeout(() => URL.revokeObjectURL(url), 10000);
}
