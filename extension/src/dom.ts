/**
 * Small DOM and text helpers shared by the renderer's parts: elements built with their
 * text set through `textContent` (never parsed as HTML), buttons, icons, and the short
 * number and time formats shown to the learner.
 */

export const SVG_NS = 'http://www.w3.org/2000/svg';

/** Shorten `text` to `max` characters, on one line. */
export function fitText(text: string, max: number): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > max ? flat.slice(0, Math.max(1, max - 1)) + '\u2026' : flat;
}

/** An HTML element with a class and, optionally, its text (as text, never as HTML). */
export function h<K extends keyof HTMLElementTagNameMap>(
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

/** A toolbar button whose `title` is its tooltip and accessible name. */
export function button(className: string, text: string, title: string): HTMLButtonElement {
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

/** A button drawn as one of `ICONS`. */
export function iconButton(className: string, icon: string, title: string): HTMLButtonElement {
  const b = button(className + ' kg-icon-button', '', title);
  const svg = document.createElementNS(SVG_NS, 'svg');
  svg.setAttribute('viewBox', '0 0 16 16');
  svg.setAttribute('width', '12');
  svg.setAttribute('height', '12');
  svg.setAttribute('aria-hidden', 'true');
  const path = document.createElementNS(SVG_NS, 'path');
  path.setAttribute('d', ICONS[icon]);
  path.setAttribute('fill', 'currentColor');
  svg.appendChild(path);
  b.appendChild(svg);
  return b;
}

/** A number in a short form (legend ends). */
export function shortNumber(x: number): string {
  if (x === 0 || !Number.isFinite(x)) {
    return String(x);
  }
  const a = Math.abs(x);
  return a >= 1e4 || a < 1e-3 ? x.toExponential(1) : String(Number(x.toPrecision(2)));
}

/** Seconds in the unit that reads best: µs, ms or s, three digits. */
export function formatSeconds(s: number): string {
  if (s < 1e-3) {
    return `${(s * 1e6).toPrecision(3)} \u00b5s`;
  }
  if (s < 1) {
    return `${(s * 1e3).toPrecision(3)} ms`;
  }
  return `${s.toPrecision(3)} s`;
}
