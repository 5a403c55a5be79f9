/** The ipywidgets module name and version; the Python side's `_model_module` / `_view_module`. */
export const MODULE_NAME = 'kernelgraph-extension';
export const MODULE_VERSION = '0.1.0';
