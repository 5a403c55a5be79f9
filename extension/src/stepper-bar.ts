/**
 * The step-through bar: where a run executed node by node stands (nodes run, the next one,
 * where it stopped) and, when a kernel drives it, its Step / Run to end / Reset buttons.
 */
import { button, h } from './dom';
import { GraphDocument, StepperInfo } from './schema';

/** What the learner can ask of a step-through run. */
export type StepAction = 'step' | 'run' | 'reset' | 'run_to';

/**
 * Fill `el` for `stepper` (hidden without one). `onAction` is the kernel's hook (absent in
 * a saved notebook); `message` is a line for the learner when the run has no error.
 */
export function updateStepperBar(
  el: HTMLElement,
  stepper: StepperInfo | null,
  doc: GraphDocument,
  message: string,
  onAction: ((action: StepAction, node?: string) => void) | undefined
): void {
  el.replaceChildren();
  el.style.display = stepper ? '' : 'none';
  if (!stepper) {
    return;
  }
  const act = onAction;
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
    el.append(next, run, reset);
  }
  const name = (id: string | null): string => (id !== null ? doc.byId.get(id)?.name ?? id : '');
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
  el.appendChild(statusEl);
  if (act && !stopped) {
    el.appendChild(h('span', 'kg-stepper-hint', 'click a node to run up to it'));
  }
  const text = stepper.error ?? message;
  if (text) {
    el.appendChild(h('pre', 'kg-stepper-error', text));
  }
}
