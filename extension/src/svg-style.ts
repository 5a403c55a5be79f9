/**
 * How the drawing is coloured: the stylesheet kept inside the SVG (so that an exported file
 * looks the same), built from the shared style (./style), and the colour scale of gradient
 * norms on the edges of a backward pass.
 */
import { interpolateRgb } from 'd3-interpolate';

import { KINDS } from './schema';
import { FONT_SIZE, GRAD_TEXT, KIND_COLOURS, MARK_COLOURS } from './style';

const GRAD_LOW = '#fdae6b';
const GRAD_HIGH = '#7f0000';
const GRAD_ZERO = '#bdbdbd';
const GRAD_NONFINITE = '#d6007e';
const GRAD_UNKNOWN = '#e6550d';

/** Gradient norm position (0..1, log scale) to colour. */
export const gradRamp = interpolateRgb(GRAD_LOW, GRAD_HIGH);

/**
 * The colour of an edge carrying a gradient at `pos` on the norm scale: null is an unknown
 * norm, below 0 a zero, above 1 a non-finite one.
 */
export function gradColour(pos: number | null): string {
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

const CODE_FONT = 'font-family: var(--jp-code-font-family, ui-monospace, Menlo, Consolas, monospace);';
const op = KIND_COLOURS.op;
const scope = KIND_COLOURS.scope;
const mark = MARK_COLOURS;
const kindRules = KINDS.map(
  kind => `svg.kg-svg g[data-kind="${kind}"] .kg-box { fill: ${KIND_COLOURS[kind].fill}; stroke: ${KIND_COLOURS[kind].stroke}; }`
);

/** Styles of the drawing itself, kept inside the SVG so that an exported file looks the same. */
export const SVG_STYLE = `
svg.kg-svg { font-family: var(--jp-ui-font-family, system-ui, -apple-system, "Segoe UI", sans-serif); }
svg.kg-svg .kg-box { fill: ${op.fill}; stroke: ${op.stroke}; stroke-width: 1.2px; transition: stroke 0.2s, stroke-width 0.2s, fill 0.2s; }
${kindRules.join('\n')}
svg.kg-svg g.kg-scope .kg-box { fill: ${scope.fill}; stroke: ${scope.stroke}; stroke-width: 1.5px; stroke-dasharray: 5 2; }
svg.kg-svg g.kg-item { cursor: default; }
svg.kg-svg g.kg-scope { cursor: pointer; }
svg.kg-svg .kg-label { font-size: ${FONT_SIZE.label}px; font-weight: 600; fill: #0f172a; text-anchor: middle; }
svg.kg-svg .kg-value { font-size: 10.5px; fill: #334155; text-anchor: middle; ${CODE_FONT} }
svg.kg-svg .kg-grad { font-size: 10.5px; fill: ${GRAD_TEXT}; text-anchor: middle; font-weight: 600; ${CODE_FONT} }
svg.kg-svg .kg-toggle { font-size: 13px; font-weight: 700; fill: #334155; text-anchor: middle; }
svg.kg-svg g[data-mark="folded"] .kg-box { stroke: ${mark.folded.stroke}; stroke-width: 3px; fill: ${mark.folded.fill}; }
svg.kg-svg g[data-mark="merged"] .kg-box { stroke: ${mark.merged.stroke}; stroke-width: 3px; }
svg.kg-svg g[data-mark="simplified"] .kg-box { stroke: ${mark.simplified.stroke}; stroke-width: 3px; }
svg.kg-svg g[data-mark="fused"] .kg-box { stroke: ${mark.fused.stroke}; }
svg.kg-svg g[data-mark="removed"] { opacity: 0.45; }
svg.kg-svg g[data-mark="removed"] .kg-box { stroke-dasharray: 4 3; fill: #f8fafc; }
svg.kg-svg g.kg-cluster.kg-fused-group .kg-cluster-box { fill: rgba(234, 88, 12, 0.07); stroke: ${mark.fused.stroke}; stroke-width: 1.6px; stroke-dasharray: none; }
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
svg.kg-svg .kg-edge-label { font-size: ${FONT_SIZE.edgeLabel}px; fill: var(--jp-ui-font-color2, #64748b); text-anchor: middle; paint-order: stroke; stroke: var(--jp-layout-color0, #ffffff); stroke-width: 3px; stroke-linejoin: round; ${CODE_FONT} }
svg.kg-svg .kg-cluster-box { fill: rgba(148, 163, 184, 0.10); stroke: #94a3b8; stroke-width: 1px; stroke-dasharray: 4 3; cursor: pointer; }
svg.kg-svg .kg-cluster-label { font-size: 11px; font-weight: 600; fill: var(--jp-ui-font-color1, #475569); cursor: pointer; }
svg.kg-svg .kg-marker { fill: #94a3b8; }
svg.kg-svg .kg-marker-grad { fill: #b91c1c; }
svg.kg-svg .kg-marker-active { fill: #f97316; }
`;
