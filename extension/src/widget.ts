/**
 * The ipywidgets 8 model and view of `kernelgraph.widgets.GraphWidget`.
 *
 * Model state: `graph` (the document of SCHEMA.md, replaced as a whole when it
 * changes) and `step` (two-way): the index in `graph.steps` of the step shown,
 * counted like a Python index: -1 (the default) is the last step, i.e. the end;
 * -(n + 1) is before the first step (nothing applied yet).
 * The renderer counts steps *applied* (0..n), so index i <-> i + 1 applied.
 */
import { DOMWidgetModel, DOMWidgetView, ISerializers } from '@jupyter-widgets/base';

import { GraphRenderer, RendererOptions, StepAction } from './renderer';
import { MODULE_NAME, MODULE_VERSION } from './version';

/** Steps applied (0..n) for a `step` index (Python-style, negative from the end). */
export function appliedFromIndex(index: unknown, n: number): number {
  if (typeof index !== 'number' || !Number.isFinite(index)) {
    return n;
  }
  const i = Math.trunc(index);
  return i >= 0 ? Math.min(i + 1, n) : Math.max(0, n + i + 1);
}

/** The `step` index for `applied` steps: -1 at the end, -(n + 1) before the first. */
export function indexFromApplied(applied: number, n: number): number {
  return applied >= n ? -1 : applied <= 0 ? -(n + 1) : applied - 1;
}

export class GraphModel extends DOMWidgetModel {
  defaults(): any {
    return {
      ...super.defaults(),
      _model_name: GraphModel.model_name,
      _model_module: GraphModel.model_module,
      _model_module_version: GraphModel.model_module_version,
      _view_name: GraphModel.view_name,
      _view_module: GraphModel.view_module,
      _view_module_version: GraphModel.view_module_version,
      graph: {},
      step: -1
    };
  }

  static serializers: ISerializers = {
    ...DOMWidgetModel.serializers
  };

  static model_name = 'GraphModel';
  static model_module = MODULE_NAME;
  static model_module_version = MODULE_VERSION;
  static view_name = 'GraphView';
  static view_module = MODULE_NAME;
  static view_module_version = MODULE_VERSION;
}

export class GraphView extends DOMWidgetView {
  protected renderer: GraphRenderer | null = null;

  /** The renderer's options; a subclass adds its own hooks. */
  protected rendererOptions(): RendererOptions {
    return { onStepChange: applied => this.sendStep(applied) };
  }

  render(): void {
    this.el.classList.add('kg-widget');
    this.renderer = new GraphRenderer(this.el, this.rendererOptions());
    this.renderer.setDocument(this.model.get('graph'), {
      step: n => appliedFromIndex(this.model.get('step'), n)
    });
    this.listenTo(this.model, 'change:graph', this.onGraphChange);
    this.listenTo(this.model, 'change:step', this.onStepChange);
  }

  private sendStep(applied: number): void {
    const index = indexFromApplied(applied, this.renderer?.stepCount ?? 0);
    if (index !== this.model.get('step')) {
      this.model.set('step', index);
      this.touch();
    }
  }

  private onGraphChange(): void {
    const renderer = this.renderer;
    if (!renderer) {
      return;
    }
    // The kernel may set a step together with the graph; otherwise keep the
    // current one (following the end of a growing graph).
    const stepChanged = this.model.hasChanged('step');
    renderer.setDocument(this.model.get('graph'), {
      step: stepChanged ? n => appliedFromIndex(this.model.get('step'), n) : undefined
    });
    this.sendStep(renderer.currentStep);
  }

  private onStepChange(): void {
    const renderer = this.renderer;
    if (renderer) {
      const applied = appliedFromIndex(this.model.get('step'), renderer.stepCount);
      if (applied !== renderer.currentStep) {
        renderer.setStep(applied);
      }
    }
  }

  remove(): any {
    this.renderer?.dispose();
    this.renderer = null;
    return super.remove();
  }
}

/**
 * The view of `kernelgraph.widgets.StepWidget`: the graph view plus Step / Run to end /
 * Reset buttons (and click-a-node-to-run-to-it), sent to the kernel as custom messages
 * `{action, node}`; the kernel answers with a new `graph` (and `message`).
 */
export class StepView extends GraphView {
  protected rendererOptions(): RendererOptions {
    return {
      ...super.rendererOptions(),
      onAction: (action: StepAction, node?: string) => {
        this.send(node === undefined ? { action } : { action, node });
      }
    };
  }

  render(): void {
    super.render();
    this.el.classList.add('kg-step-widget');
    this.renderer?.setMessage(String(this.model.get('message') ?? ''));
    this.listenTo(this.model, 'change:message', () => {
      this.renderer?.setMessage(String(this.model.get('message') ?? ''));
    });
  }
}
