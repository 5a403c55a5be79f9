/**
 * The MIME renderer for `application/vnd.kernelgraph.graph+json`: a saved
 * notebook redraws the graph and replays its animation with no kernel.
 * It only creates text nodes, so it is marked safe (it renders in untrusted notebooks).
 */
import { IRenderMime } from '@jupyterlab/rendermime-interfaces';
import { Widget } from '@lumino/widgets';

import { GraphRenderer } from './renderer';
import { MIME_TYPE } from './schema';

export class GraphMimeRenderer extends Widget implements IRenderMime.IRenderer {
  private renderer: GraphRenderer | null = null;
  private readonly mimeType: string;

  constructor(options: IRenderMime.IRendererOptions) {
    super();
    this.mimeType = options.mimeType;
    this.addClass('kg-mime');
  }

  renderModel(model: IRenderMime.IMimeModel): Promise<void> {
    if (!this.renderer) {
      this.renderer = new GraphRenderer(this.node);
    }
    this.renderer.setDocument(model.data[this.mimeType]);
    return Promise.resolve();
  }

  dispose(): void {
    this.renderer?.dispose();
    this.renderer = null;
    super.dispose();
  }
}

export const rendererFactory: IRenderMime.IRendererFactory = {
  safe: true,
  mimeTypes: [MIME_TYPE],
  defaultRank: 0,
  createRenderer: options => new GraphMimeRenderer(options)
};

const extension: IRenderMime.IExtension = {
  id: 'kernelgraph-extension:mime',
  description: 'Renders kernelgraph graph documents.',
  rendererFactory,
  // Lower rank wins: ahead of image/svg+xml (80) and text/plain (120).
  rank: 0,
  dataType: 'json'
};

export default extension;
