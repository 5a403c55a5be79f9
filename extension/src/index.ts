export { GraphRenderer, renderGraph, fitText } from './renderer';
export type { RendererOptions, SetDocumentOptions } from './renderer';
export { computeLayout, topScopes } from './layout';
export { normalizeDocument, MIME_TYPE, SCHEMA_VERSION } from './schema';
export type { GraphDocument, GraphNode, GraphEdge, GraphStep } from './schema';
export { stateAt, Timeline } from './state';
export { MODULE_NAME, MODULE_VERSION } from './version';
