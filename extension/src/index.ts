export { GraphRenderer, renderGraph, fitText } from './renderer';
export type { RendererOptions, SetDocumentOptions, StepAction } from './renderer';
export { defaultStage, groupKey, stageDocument } from './compiler';
export { computeLayout, topScopes } from './layout';
export { normalizeDocument, MIME_TYPE, SCHEMA_VERSION } from './schema';
export type {
  CompilerInfo,
  CompilerStage,
  FusedGroup,
  GraphDocument,
  GraphEdge,
  GraphNode,
  GraphStep,
  StepperInfo
} from './schema';
export { stateAt, Timeline } from './state';
export { MODULE_NAME, MODULE_VERSION } from './version';
