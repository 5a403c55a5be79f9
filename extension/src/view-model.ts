/**
 * What a renderer shows, apart from how: the document given and the one drawn (a compiler
 * stage of it, or itself), the step shown, the collapsed scopes and the name search. Pure
 * (no DOM); the renderer (./renderer) draws it and owns the elements.
 */
import { defaultStage, drawable, stageDocument, stageIndex } from './compiler';
import { topScopes } from './layout';
import { GraphDocument, GraphNode, normalizeDocument } from './schema';
import { Timeline } from './state';

export interface SetDocumentOptions {
  /**
   * Steps applied to show (0..length), or a function of the new document's
   * step count giving it. Omitted, null or negative: keep the current step (or
   * stay at the end if the view was at the end); a first document is shown at its end.
   */
  step?: number | null | ((length: number) => number | null);
}

export class ViewModel {
  /** What is drawn: one compiler stage of `fullDoc`, or `fullDoc` itself. */
  doc: GraphDocument = normalizeDocument({});
  /** The document as given. */
  fullDoc: GraphDocument = this.doc;
  /** The compiler stage shown (-1 for a plain graph) and its name. */
  stage = -1;
  stageName: string | null = null;
  timeline: Timeline = new Timeline(this.doc);
  /** Steps applied (0..timeline.length). */
  step = 0;
  /** Top-level scopes drawn as one box. */
  collapsed = new Set<string>();
  /** The search text (trimmed, lower case) and the ids of the nodes whose names hold it. */
  query = '';
  matches = new Set<string>();
  private knownScopes = new Set<string>();
  private hasDocument = false;

  /** `options.collapseAbove`: new scopes start collapsed above this many nodes (200). */
  constructor(private readonly options: { collapseAbove?: number }) {}

  /** Take a new document (replacing the old one as a whole). */
  setDocument(raw: unknown, options: SetDocumentOptions = {}): void {
    const oldLength = this.timeline.length;
    const wasAtEnd = !this.hasDocument || this.step >= oldLength;
    this.fullDoc = normalizeDocument(raw);
    // A compiler view keeps the pass the learner picked when a new document comes.
    const compiler = this.fullDoc.compiler;
    this.stage = -1;
    if (compiler) {
      const kept = this.stageName !== null ? stageIndex(compiler, this.stageName) : null;
      this.stage = kept ?? defaultStage(compiler);
    }
    this.stageName = compiler && this.stage >= 0 ? compiler.stages[this.stage].name : null;
    this.adopt(stageDocument(this.fullDoc, this.stage));
    const n = this.timeline.length;

    const requested = typeof options.step === 'function' ? options.step(n) : options.step;
    if (typeof requested === 'number' && Number.isFinite(requested) && requested >= 0) {
      this.step = Math.min(Math.floor(requested), n);
    } else {
      this.step = wasAtEnd ? n : Math.min(this.step, n);
    }
    this.hasDocument = true;
    this.updateMatches();
  }

  /**
   * Show stage `which` (an index or a pass name) of a compiler view, at its end.
   * Returns false when there is no such drawable stage or it is shown already.
   */
  selectStage(which: number | string): boolean {
    const compiler = this.fullDoc.compiler;
    if (!compiler) {
      return false;
    }
    const i = typeof which === 'string' ? stageIndex(compiler, which) : drawable(compiler, which) ? which : null;
    if (i === null || i === this.stage) {
      return false;
    }
    this.stage = i;
    this.stageName = compiler.stages[i].name;
    this.adopt(stageDocument(this.fullDoc, i));
    this.step = this.timeline.length;
    this.updateMatches();
    return true;
  }

  /** Whether the stage shown is the compiled graph (the one the memory plan is for). */
  isLastStage(): boolean {
    const compiler = this.fullDoc.compiler;
    return compiler !== null && this.stage === defaultStage({ ...compiler, selected: -1 });
  }

  /** Collapse exactly the given top-level scopes (unknown ones are ignored). */
  setCollapsed(scopes: Iterable<string>): void {
    const known = topScopes(this.doc);
    this.collapsed = new Set([...scopes].filter(s => known.has(s)));
  }

  toggleScope(scope: string): void {
    const next = new Set(this.collapsed);
    if (next.has(scope)) {
      next.delete(scope);
    } else {
      next.add(scope);
    }
    this.collapsed = next;
  }

  setQuery(query: string): void {
    this.query = query.trim().toLowerCase();
    this.updateMatches();
  }

  /** Expand the scopes that hide a search match; whether any was collapsed. */
  expandMatches(): boolean {
    const scopes = new Set<string>();
    for (const id of this.matches) {
      const node = this.doc.byId.get(id);
      if (node && this.collapsed.has(node.topScope)) {
        scopes.add(node.topScope);
      }
    }
    if (scopes.size === 0) {
      return false;
    }
    this.collapsed = new Set([...this.collapsed].filter(s => !scopes.has(s)));
    return true;
  }

  /** The first node (in document order) that the search matches. */
  firstMatch(): GraphNode | undefined {
    return this.doc.nodes.find(n => this.matches.has(n.id));
  }

  /** Draw `doc` (a whole document or one compiler stage of it). */
  private adopt(doc: GraphDocument): void {
    this.doc = doc;
    this.timeline = new Timeline(doc);
    // Scopes keep their collapsed/expanded state across documents; new ones
    // start collapsed in a big graph.
    const scopes = topScopes(doc);
    const collapseNew = doc.nodes.length > (this.options.collapseAbove ?? 200);
    const collapsed = new Set<string>();
    for (const scope of scopes.keys()) {
      if (this.knownScopes.has(scope) ? this.collapsed.has(scope) : collapseNew) {
        collapsed.add(scope);
      }
    }
    this.collapsed = collapsed;
    this.knownScopes = new Set(scopes.keys());
  }

  private updateMatches(): void {
    this.matches = new Set();
    if (this.query !== '') {
      for (const node of this.doc.nodes) {
        if (node.name.toLowerCase().includes(this.query)) {
          this.matches.add(node.id);
        }
      }
    }
  }
}
