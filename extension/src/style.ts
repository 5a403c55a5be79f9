/**
 * The look both renderers share: node and edge colours by kind and by compiler mark, the
 * device outline, character width, spacing and font sizes. They live in one file,
 * kernelgraph/widgets/style.json, which kernelgraph/widgets/svg.py (the static SVG fallback)
 * reads too; this module is the extension's typed view of it. Pure (no DOM): the layout's
 * node test loads it.
 *
 * The import reaches outside src/ on purpose: lib/ and lib-test/ sit beside src/, so the
 * compiled relative path still names the same file, and the labextension build bundles it.
 */
import style from '../../kernelgraph/widgets/style.json';

/** A box's fill and outline. */
export interface Colours {
  fill: string;
  stroke: string;
}

/** How a compiler mark outlines a node (and, for some, fills it). */
export interface MarkColours {
  stroke: string;
  fill?: string;
}

/** Fill and outline of each node kind (and of a collapsed scope's box, `scope`). */
export const KIND_COLOURS: Readonly<Record<string, Colours>> = style.kinds;

/** The outline of each compiler mark: folded, merged, simplified, fused, removed. */
export const MARK_COLOURS: Readonly<Record<string, MarkColours>> = style.marks;

/** The outline of a node placed on a GPU. */
export const DEVICE_STROKE: string = style.device.stroke;

/** The colour of a gradient's text in a box. */
export const GRAD_TEXT: string = style.gradText;

/** Average width of one character of a label, to size boxes and shorten text. */
export const CHAR_WIDTH: number = style.charWidth;

/** Font sizes of a node's label and an edge's label. */
export const FONT_SIZE: Readonly<{ label: number; edgeLabel: number }> = style.fontSize;

/** Gaps between boxes in a rank, between ranks, and around the drawing. */
export const SPACING: Readonly<{ node: number; rank: number; margin: number }> = style.spacing;
