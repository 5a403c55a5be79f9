/**
 * The JupyterLab plugin that registers the ipywidgets model and view.
 * `@jupyter-widgets/base` is a shared singleton (from jupyterlab_widgets), not bundled.
 */
import { JupyterFrontEnd, JupyterFrontEndPlugin } from '@jupyterlab/application';
import { IJupyterWidgetRegistry } from '@jupyter-widgets/base';

import { MODULE_NAME, MODULE_VERSION } from './version';
import * as widgetExports from './widget';

const widgetPlugin: JupyterFrontEndPlugin<void> = {
  id: 'kernelgraph-extension:widgets',
  description: 'The kernelgraph GraphWidget view (ipywidgets).',
  autoStart: true,
  // Optional: without jupyterlab_widgets the MIME renderer still works.
  optional: [IJupyterWidgetRegistry],
  activate: (_app: JupyterFrontEnd, registry: IJupyterWidgetRegistry | null): void => {
    if (!registry) {
      console.warn('kernelgraph-extension: no Jupyter widget registry; GraphWidget views are unavailable.');
      return;
    }
    registry.registerWidget({
      name: MODULE_NAME,
      version: MODULE_VERSION,
      exports: widgetExports as any
    });
  }
};

export default widgetPlugin;
