// The knowledge graph as seed 001 draws it, force-directed by `force-graph`:
//
// - Hub nodes (purple #6d28d9): the user (tenant), the organisation
//   (workspace) and the project (repository) — each memory hangs off the
//   hub of the level it is bound to;
// - Fact nodes (blue #2563eb): memories; a replaced version is faded and
//   dashed, a negated or quarantined one faded, a destroyed one hollow;
// - Entity nodes: what the memories name, coloured by the djb2 hash of the
//   entity type into a 10-colour palette (amber #f59e0b when untyped), so a
//   type keeps its colour everywhere and across reloads.
//
// Labels only when both density gates pass (seed: zoom ≥ 1.5 and at least
// 3000 px² of screen per node on screen). Clicking a node expands it one
// hop further; `highlight` rings search hits and paths; filters hide entity
// types and facts by kind, source and date.

import ForceGraph from "force-graph";

export type NodeKind = "hub" | "fact" | "entity";

export interface GraphNode {
  id: string;
  kind: NodeKind;
  /** Entity type, memory kind, or hub level (user / organisation / project). */
  type: string;
  label: string;
  exposure?: string;
  negated?: boolean;
  /** A newer version replaced this memory. */
  superseded?: boolean;
  created_at?: string;
  source?: string;
  x?: number;
  y?: number;
}

export interface GraphLink {
  source: string | GraphNode;
  target: string | GraphNode;
  /** `hub`, `mention`, `supersedes`, `derived_lesson_from`, or a triple's relation. */
  kind: string;
  /** The memory stating a triple. */
  atomId?: string;
}

interface Link {
  from: string;
  to: string;
  kind: string;
  atomId?: string;
}

export const HUB_COLOUR = "#6d28d9";
export const FACT_COLOUR = "#2563eb";
export const ENTITY_DEFAULT = "#f59e0b";
/** Ten well-separated colours for entity types (amber first). */
export const PALETTE = ["#f59e0b", "#10b981", "#ef4444", "#06b6d4", "#8b5cf6", "#ec4899", "#84cc16", "#f97316", "#14b8a6", "#64748b"];

/** djb2: h = h·33 + c, from 5381. */
export function djb2(text: string): number {
  let h = 5381;
  for (let i = 0; i < text.length; i++) h = (Math.imul(h, 33) + text.charCodeAt(i)) >>> 0;
  return h;
}

export function entityColour(type?: string): string {
  return type ? PALETTE[djb2(type) % PALETTE.length] : ENTITY_DEFAULT;
}

export function colourOf(n: { kind: NodeKind; type: string }): string {
  return n.kind === "hub" ? HUB_COLOUR : n.kind === "fact" ? FACT_COLOUR : entityColour(n.type);
}

/** Seed 001's label gates: both must pass. */
export const PILL_READABILITY_MIN_SCALE = 1.5;
export const PILL_MIN_SCREEN_AREA_PER_NODE = 3000;
export function labelsFit(widthPx: number, heightPx: number, zoom: number, nodesOnScreen: number): boolean {
  if (nodesOnScreen === 0) return false;
  return zoom >= PILL_READABILITY_MIN_SCALE && (widthPx * heightPx) / nodesOnScreen >= PILL_MIN_SCREEN_AREA_PER_NODE;
}

/** An atom line of the store's export, as the graph reads it. */
export interface AtomRecord {
  atom_id: string;
  content: string | null;
  kind: string;
  source: string;
  scope: { tenant_id: string; workspace?: string; repository?: string; branch?: string };
  exposure_state: string;
  negated: boolean;
  superseded_by?: string | null;
  created_at: string;
}

/** What `load` reads: the export (atoms, edges) and the graph view (entities, mentions, triples). */
export interface GraphData {
  atoms: AtomRecord[];
  edges: { from: string; to: string; kind: string }[];
  entities: { name: string; type: string; atom_count: number }[];
  mentions: { atom_id: string; entity: string }[];
  triples: { source: string; relation: string; target: string; atom_id: string }[];
}

/** Which facts and entities are drawn. */
export interface Filters {
  hiddenTypes: Set<string>;
  kind: string;
  source: string;
  /** `YYYY-MM-DD`, inclusive; empty: open. */
  from: string;
  to: string;
}

export const entityId = (name: string) => `entity:${name}`;
const hubId = (level: string, name: string) => `hub:${level}:${name}`;

export class MemoryGraph {
  private all = new Map<string, GraphNode>();
  private links: Link[] = [];
  private shown = new Set<string>();
  private marked = new Set<string>();
  private path = new Set<string>();
  /** Shown nodes with neighbours not shown (drawn with a ring); set by `render`. */
  private expandable = new Set<string>();
  private view: any;
  private el: HTMLElement;
  filters: Filters = { hiddenTypes: new Set(), kind: "", source: "", from: "", to: "" };
  onSelect: (node: GraphNode) => void = () => {};
  /** The node clicked last. */
  clicked = "";

  constructor(el: HTMLElement) {
    this.el = el;
    this.view = new (ForceGraph as any)(el)
      .nodeId("id")
      .nodeLabel((n: GraphNode) => `${n.kind === "fact" ? "memory" : n.kind === "hub" ? n.type : n.type}: ${n.label}`)
      .nodeRelSize(5)
      .linkColor((l: GraphLink) => this.linkColour(l))
      .linkWidth((l: GraphLink) => (this.onPath(l) ? 3 : l.kind === "mention" || l.kind === "hub" ? 0.6 : 1.4))
      .linkLineDash((l: GraphLink) => (l.kind === "mention" ? [2, 2] : null))
      .linkDirectionalArrowLength((l: GraphLink) => (l.kind === "mention" || l.kind === "hub" ? 0 : 4))
      .linkDirectionalArrowRelPos(1)
      .linkLabel((l: GraphLink) => l.kind)
      .cooldownTicks(120)
      .d3VelocityDecay(0.3)
      .nodeCanvasObject((n: GraphNode, ctx: CanvasRenderingContext2D, scale: number) => this.draw(n, ctx, scale))
      .nodePointerAreaPaint((n: GraphNode, colour: string, ctx: CanvasRenderingContext2D) => {
        ctx.fillStyle = colour;
        ctx.beginPath();
        ctx.arc(n.x!, n.y!, this.radius(n) + 2, 0, 2 * Math.PI);
        ctx.fill();
      })
      .onNodeClick((n: GraphNode) => {
        this.clicked = n.id;
        this.expand(n.id);
        this.onSelect(n);
      })
      .width(el.clientWidth)
      .height(el.clientHeight);
    // Compact enough that a small graph, fitted, is at a reading zoom (≥ 1.5).
    this.view.d3Force("link").distance((l: GraphLink) => (l.kind === "hub" ? 40 : 26));
    this.view.d3Force("charge").strength(-30);
    new ResizeObserver(() => this.view.width(el.clientWidth).height(el.clientHeight)).observe(el);
  }

  /**
   * Replaces the graph. Shows the hubs, the `initial` newest memories and
   * their entities, plus (unless `fresh`) what was shown before.
   */
  load(data: GraphData, initial = 60, fresh = false): void {
    this.all.clear();
    this.links = [];
    for (const a of data.atoms) {
      this.all.set(a.atom_id, {
        id: a.atom_id,
        kind: "fact",
        type: a.kind,
        label: a.content ?? `[${a.exposure_state}]`,
        exposure: a.exposure_state,
        negated: a.negated,
        superseded: !!a.superseded_by,
        created_at: a.created_at,
        source: a.source,
      });
      const hub = this.hubFor(a.scope);
      this.links.push({ from: hub, to: a.atom_id, kind: "hub" });
    }
    for (const e of data.edges) this.links.push({ from: e.from, to: e.to, kind: e.kind });
    for (const e of data.entities) this.entity(e.name, e.type);
    for (const m of data.mentions) {
      if (this.all.has(m.atom_id)) this.links.push({ from: m.atom_id, to: this.entity(m.entity), kind: "mention" });
    }
    this.addTriples(data.triples);
    const recent = [...this.all.values()]
      .filter((n) => n.kind === "fact")
      .sort((a, b) => (b.created_at ?? "").localeCompare(a.created_at ?? ""))
      .slice(0, initial);
    const keep = new Set(fresh ? [] : [...this.shown].filter((id) => this.all.has(id)));
    for (const n of this.all.values()) if (n.kind === "hub") keep.add(n.id);
    for (const n of recent) {
      keep.add(n.id);
      for (const l of this.links) {
        if (l.from === n.id && l.kind === "mention") keep.add(l.to);
        // The ends of the triples this memory states (the project, the user…).
        if (l.atomId === n.id) {
          keep.add(l.from);
          keep.add(l.to);
        }
      }
    }
    this.shown = keep;
    this.render();
  }

  /** Adds entities and triples found by a query (neighbourhood, path) and shows them. */
  merge(nodes: { name: string; type: string }[], edges: { source: string; relation: string; target: string; atom_id: string }[]): string[] {
    const ids = nodes.map((n) => this.entity(n.name, n.type));
    this.addTriples(edges);
    for (const id of ids) this.shown.add(id);
    for (const e of edges) {
      this.shown.add(this.entity(e.source));
      this.shown.add(this.entity(e.target));
    }
    this.render();
    return ids;
  }

  /** Shows a node's neighbours (and the node). */
  expand(id: string): void {
    if (!this.all.has(id)) return;
    this.shown.add(id);
    for (const l of this.links) {
      if (l.from === id) this.shown.add(l.to);
      if (l.to === id) this.shown.add(l.from);
    }
    this.render();
  }

  /** Rings these nodes (search hits); an empty set clears. */
  highlight(ids: Iterable<string>): void {
    this.marked = new Set([...ids].filter((id) => this.all.has(id)));
    for (const id of this.marked) this.shown.add(id);
    this.render();
  }

  /** Draws a path (entity names in order) thick. */
  showPath(names: string[]): void {
    this.path = new Set(names.map((n) => this.entity(n)));
    for (const id of this.path) this.shown.add(id);
    this.render();
  }

  /** Ids drawn now, and the links between them (for tests and the info line). */
  visible(): { nodes: string[]; links: Link[] } {
    const nodes = [...this.shown].filter((id) => this.passes(id));
    const on = new Set(nodes);
    return { nodes, links: this.links.filter((l) => on.has(l.from) && on.has(l.to)) };
  }

  /** Drawn nodes of one kind (hub, fact, entity). */
  visibleOf(kind: NodeKind): string[] {
    return this.visible().nodes.filter((id) => this.all.get(id)?.kind === kind);
  }

  /** The ringed search hits. */
  highlighted(): string[] {
    return [...this.marked];
  }

  node(id: string): GraphNode | undefined {
    return this.all.get(id);
  }

  /** Entity types present (for the legend and the type filter). */
  entityTypes(): string[] {
    return [...new Set([...this.all.values()].filter((n) => n.kind === "entity").map((n) => n.type))].sort();
  }

  /** Facts linked to a node (for an entity's panel). */
  factsOf(id: string): GraphNode[] {
    const out: GraphNode[] = [];
    for (const l of this.links) {
      const other = l.to === id ? l.from : l.from === id ? l.to : "";
      const n = other ? this.all.get(other) : undefined;
      if (n?.kind === "fact" && !out.includes(n)) out.push(n);
    }
    return out;
  }

  labelsShown(): boolean {
    return labelsFit(this.el.clientWidth, this.el.clientHeight, this.view.zoom(), this.nodesOnScreen());
  }

  /** Where a node is drawn, in CSS pixels relative to the graph element. */
  screenOf(id: string): { x: number; y: number } | undefined {
    const n = (this.view.graphData().nodes as GraphNode[]).find((n) => n.id === id);
    if (!n || n.x === undefined) return undefined;
    return this.view.graph2ScreenCoords(n.x, n.y);
  }

  /** Resolves when the layout has settled. */
  settled(): Promise<void> {
    return new Promise((resolve) => this.view.onEngineStop(() => resolve()));
  }

  /** Everything drawn in view; small graphs come close enough to read. */
  fit(ms = 400): void {
    this.view.zoomToFit(ms, 48);
  }

  /** Centres on a node at a reading zoom. */
  focus(id: string, ms = 400): void {
    const n = (this.view.graphData().nodes as GraphNode[]).find((n) => n.id === id);
    if (!n || n.x === undefined) return;
    this.view.centerAt(n.x, n.y, ms);
    if (this.view.zoom() < PILL_READABILITY_MIN_SCALE) this.view.zoom(2, ms);
  }

  zoom(k?: number): number {
    if (k !== undefined) this.view.zoom(k, 0);
    return this.view.zoom();
  }

  /** Re-applies the filters. */
  refilter(): void {
    this.render();
  }

  private hubFor(scope: AtomRecord["scope"]): string {
    const user = hubId("user", scope.tenant_id);
    this.hub(user, "user", scope.tenant_id);
    if (!scope.workspace) return user;
    const org = hubId("organisation", scope.workspace);
    if (this.hub(org, "organisation", scope.workspace)) this.links.push({ from: user, to: org, kind: "hub" });
    if (!scope.repository) return org;
    const project = hubId("project", scope.repository);
    if (this.hub(project, "project", scope.repository)) this.links.push({ from: org, to: project, kind: "hub" });
    return project;
  }

  /** Adds a hub; true when it is new. */
  private hub(id: string, level: string, name: string): boolean {
    if (this.all.has(id)) return false;
    this.all.set(id, { id, kind: "hub", type: level, label: name });
    return true;
  }

  /**
   * The node of an entity: its hub when the entity is the user, the
   * organisation or the project a hub stands for (the graph's "user" and
   * "project" ends of triples are the hubs themselves).
   */
  private entity(name: string, type?: string): string {
    for (const level of ["user", "organisation", "project"]) {
      const hub = hubId(level, name);
      const wanted = { user: "person", organisation: "organisation", project: "project" }[level];
      if (this.all.has(hub) && (!type || type === wanted)) return hub;
    }
    const id = entityId(name);
    const known = this.all.get(id);
    if (!known) this.all.set(id, { id, kind: "entity", type: type ?? "", label: name });
    else if (type && !known.type) known.type = type;
    return id;
  }

  private addTriples(triples: { source: string; relation: string; target: string; atom_id: string }[]): void {
    for (const t of triples) {
      const from = this.entity(t.source);
      const to = this.entity(t.target);
      const dup = this.links.some((l) => l.from === from && l.to === to && l.kind === t.relation && l.atomId === t.atom_id);
      if (!dup) this.links.push({ from, to, kind: t.relation, atomId: t.atom_id });
    }
  }

  /** Whether the filters let a node through. */
  private passes(id: string): boolean {
    const n = this.all.get(id);
    if (!n) return false;
    const f = this.filters;
    if (n.kind === "entity") return !f.hiddenTypes.has(n.type);
    if (n.kind === "fact") {
      const day = (n.created_at ?? "").slice(0, 10);
      if (f.kind && n.type !== f.kind) return false;
      if (f.source && n.source !== f.source) return false;
      if (f.from && day < f.from) return false;
      if (f.to && day > f.to) return false;
    }
    return true;
  }

  private onPath(l: GraphLink): boolean {
    const id = (end: string | GraphNode) => (typeof end === "string" ? end : end.id);
    return this.path.has(id(l.source)) && this.path.has(id(l.target)) && l.kind !== "mention" && l.kind !== "hub";
  }

  private linkColour(l: GraphLink): string {
    if (this.onPath(l)) return "#111827";
    if (l.kind === "hub") return "rgba(109, 40, 217, 0.25)";
    if (l.kind === "mention") return "rgba(100, 116, 139, 0.45)";
    if (l.kind === "supersedes" || l.kind === "derived_lesson_from") return "rgba(37, 99, 235, 0.7)";
    return "rgba(17, 24, 39, 0.55)";
  }

  private nodesOnScreen(): number {
    const w = this.el.clientWidth;
    const h = this.el.clientHeight;
    let count = 0;
    for (const n of this.view.graphData().nodes as GraphNode[]) {
      if (n.x === undefined) continue;
      const p = this.view.graph2ScreenCoords(n.x, n.y);
      if (p.x >= 0 && p.y >= 0 && p.x <= w && p.y <= h) count++;
    }
    return count;
  }

  private render(): void {
    const old = new Map<string, GraphNode>((this.view.graphData().nodes as GraphNode[]).map((n) => [n.id, n]));
    const visible = this.visible();
    const nodes = visible.nodes.map((id) => {
      const prev = old.get(id);
      const next = this.all.get(id)!;
      // Keep the positions of nodes already on screen.
      return prev ? Object.assign(prev, next, { x: prev.x, y: prev.y }) : { ...next };
    });
    const links = visible.links.map((l) => ({ source: l.from, target: l.to, kind: l.kind, atomId: l.atomId }));
    const on = new Set(visible.nodes);
    this.expandable.clear();
    for (const l of this.links) {
      if (on.has(l.from) !== on.has(l.to) && this.passes(on.has(l.from) ? l.to : l.from)) {
        this.expandable.add(on.has(l.from) ? l.from : l.to);
      }
    }
    this.view.graphData({ nodes, links });
  }

  private radius(n: GraphNode): number {
    return n.kind === "hub" ? 9 : n.kind === "entity" ? 6 : 5;
  }

  private draw(n: GraphNode, ctx: CanvasRenderingContext2D, scale: number): void {
    const r = this.radius(n);
    const colour = colourOf(n);
    const faded = n.negated || n.exposure === "quarantined" || n.superseded;
    ctx.globalAlpha = faded ? 0.35 : 1;
    ctx.beginPath();
    ctx.arc(n.x!, n.y!, r, 0, 2 * Math.PI);
    if (n.exposure === "sealed" || n.exposure === "tombstoned") {
      ctx.strokeStyle = colour;
      ctx.lineWidth = 1.5 / scale;
      ctx.stroke();
    } else {
      ctx.fillStyle = colour;
      ctx.fill();
    }
    if (n.superseded) {
      // A replaced version: dashed outline, so it reads as "was".
      ctx.setLineDash([2 / scale, 2 / scale]);
      ctx.strokeStyle = "#1d2330";
      ctx.lineWidth = 1 / scale;
      ctx.stroke();
      ctx.setLineDash([]);
    }
    ctx.globalAlpha = 1;
    for (const [on, ring, width] of [
      [this.marked.has(n.id), "#facc15", 3],
      [this.path.has(n.id), "#111827", 2],
      [this.expandable.has(n.id), colour, 1.2],
    ] as const) {
      if (!on) continue;
      ctx.strokeStyle = ring;
      ctx.lineWidth = width / scale;
      ctx.beginPath();
      ctx.arc(n.x!, n.y!, r + 2.5, 0, 2 * Math.PI);
      ctx.stroke();
    }
    if (labelsFit(this.el.clientWidth, this.el.clientHeight, scale, this.nodesOnScreenCached(scale))) {
      this.pill(n, ctx, scale, r);
    }
  }

  private screenCount = { scale: -1, frame: -1, count: 0 };

  /** Nodes on screen, counted once per frame (draw runs per node). */
  private nodesOnScreenCached(scale: number): number {
    const frame = Math.floor(performance.now() / 16);
    if (this.screenCount.scale !== scale || this.screenCount.frame !== frame) {
      this.screenCount = { scale, frame, count: this.nodesOnScreen() };
    }
    return this.screenCount.count;
  }

  /** The label as a pill under the node. */
  private pill(n: GraphNode, ctx: CanvasRenderingContext2D, scale: number, r: number): void {
    const text = n.label.length > 30 ? n.label.slice(0, 29) + "…" : n.label;
    const size = 11 / scale;
    ctx.font = `${n.kind === "fact" ? "" : "600 "}${size}px system-ui, "Noto Sans CJK TC", sans-serif`;
    const w = ctx.measureText(text).width + 8 / scale;
    const h = size + 4 / scale;
    const x = n.x! - w / 2;
    const y = n.y! + r + 2 / scale;
    ctx.fillStyle = "rgba(255, 255, 255, 0.88)";
    ctx.beginPath();
    (ctx as any).roundRect ? (ctx as any).roundRect(x, y, w, h, h / 2) : ctx.rect(x, y, w, h);
    ctx.fill();
    ctx.fillStyle = n.kind === "fact" ? "#1d2330" : colourOf(n);
    ctx.textAlign = "center";
    ctx.textBaseline = "top";
    ctx.fillText(text, n.x!, y + 2 / scale);
  }
}
