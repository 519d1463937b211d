// The memory graph: atoms and their edges (supersedes, derived_lesson_from),
// read from the store's export, drawn force-directed by `force-graph`.
//
// What is shown: the most recent atoms (up to `initial`) plus what the user
// asks for; clicking a node expands its neighbours. Node colour comes from
// the node's type through a string hash, so any type (atom kinds today,
// entity types once the graph issue lands) gets a stable colour without a
// table. Labels are drawn only when each node has room for one on screen.

import ForceGraph from "force-graph";

export interface GraphNode {
  id: string;
  /** The node's type: the atom kind (entity types once the graph issue lands). */
  type: string;
  /** visible, quarantined, sealed or tombstoned. */
  exposure: string;
  label: string;
  negated: boolean;
  created_at: string;
  x?: number;
  y?: number;
}

export interface GraphLink {
  source: string | GraphNode;
  target: string | GraphNode;
  kind: string;
}

/** FNV-1a of the type name → hue, saturation, lightness; the same type always gets the same colour. */
export function colourFor(type: string): string {
  let h = 0x811c9dc5;
  for (let i = 0; i < type.length; i++) {
    h ^= type.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return `hsl(${h % 360}, ${50 + ((h >>> 9) % 30)}%, ${36 + ((h >>> 17) % 22)}%)`;
}

/**
 * Labels need room: each node gets (visible area / nodes) square pixels at the
 * current zoom; a label is drawn when that exceeds `LABEL_AREA`.
 */
export const LABEL_AREA = 9000;
export function labelsFit(widthPx: number, heightPx: number, zoom: number, nodes: number): boolean {
  if (nodes === 0) return false;
  return (widthPx * heightPx * zoom * zoom) / nodes >= LABEL_AREA && zoom >= 0.6;
}

/** The whole store's graph (from export JSON Lines) and the part on screen. */
export class MemoryGraph {
  private all = new Map<string, GraphNode>();
  private edges: { from: string; to: string; kind: string }[] = [];
  private shown = new Set<string>();
  /** Shown nodes with a neighbour not shown (drawn with a ring); set by `render`, read every frame. */
  private expandable = new Set<string>();
  private view: any;
  private el: HTMLElement;
  onSelect: (id: string) => void = () => {};
  /** The node clicked last. */
  clicked = "";

  constructor(el: HTMLElement) {
    this.el = el;
    this.view = new (ForceGraph as any)(el)
      .nodeId("id")
      .nodeLabel((n: GraphNode) => `${n.type}: ${n.label}`)
      .nodeRelSize(5)
      .linkColor((l: GraphLink) => colourFor("edge:" + l.kind))
      .linkDirectionalArrowLength(5)
      .linkDirectionalArrowRelPos(1)
      .linkLabel((l: GraphLink) => l.kind)
      .cooldownTicks(120)
      .d3VelocityDecay(0.3)
      .nodeCanvasObject((n: GraphNode, ctx: CanvasRenderingContext2D, scale: number) => this.draw(n, ctx, scale))
      .nodePointerAreaPaint((n: GraphNode, colour: string, ctx: CanvasRenderingContext2D) => {
        ctx.fillStyle = colour;
        ctx.beginPath();
        ctx.arc(n.x!, n.y!, 7, 0, 2 * Math.PI);
        ctx.fill();
      })
      .onNodeClick((n: GraphNode) => {
        this.clicked = n.id;
        this.expand(n.id);
        this.onSelect(n.id);
      })
      .width(el.clientWidth)
      .height(el.clientHeight);
    this.view.d3Force("link").distance(45);
    this.view.d3Force("charge").strength(-60);
    new ResizeObserver(() => this.view.width(el.clientWidth).height(el.clientHeight)).observe(el);
  }

  /** Replaces the store's graph; shows the `initial` most recent atoms and (unless `fresh`) what was shown. */
  load(jsonl: string, initial = 150, fresh = false): void {
    this.all.clear();
    this.edges = [];
    for (const line of jsonl.split("\n")) {
      if (!line.trim()) continue;
      const rec = JSON.parse(line);
      if (rec.type === "atom") {
        this.all.set(rec.atom_id, {
          id: rec.atom_id,
          type: rec.kind,
          exposure: rec.exposure_state,
          label: rec.content ?? `[${rec.exposure_state}]`,
          negated: rec.negated,
          created_at: rec.created_at,
        });
      } else if (rec.type === "edge") {
        this.edges.push({ from: rec.from, to: rec.to, kind: rec.kind });
      }
    }
    const recent = [...this.all.values()].sort((a, b) => b.created_at.localeCompare(a.created_at)).slice(0, initial);
    const keep = new Set(fresh ? [] : [...this.shown].filter((id) => this.all.has(id)));
    for (const n of recent) keep.add(n.id);
    this.shown = keep;
    this.render();
  }

  /** Shows a node's neighbours (and the node). */
  expand(id: string): void {
    if (!this.all.has(id)) return;
    this.shown.add(id);
    for (const e of this.edges) {
      if (e.from === id) this.shown.add(e.to);
      if (e.to === id) this.shown.add(e.from);
    }
    this.render();
  }

  /** Ids drawn now, and edges between them (for tests and the info line). */
  visible(): { nodes: string[]; links: { from: string; to: string; kind: string }[] } {
    return {
      nodes: [...this.shown],
      links: this.edges.filter((e) => this.shown.has(e.from) && this.shown.has(e.to)),
    };
  }

  types(): string[] {
    return [...new Set([...this.all.values()].map((n) => n.type))].sort();
  }

  labelsShown(): boolean {
    return labelsFit(this.el.clientWidth, this.el.clientHeight, this.view.zoom(), this.shown.size);
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

  fit(): void {
    this.view.zoomToFit(0, 40);
  }

  zoom(k?: number): number {
    if (k !== undefined) this.view.zoom(k, 0);
    return this.view.zoom();
  }

  private render(): void {
    const old = new Map<string, GraphNode>((this.view.graphData().nodes as GraphNode[]).map((n) => [n.id, n]));
    const nodes = [...this.shown].map((id) => {
      const prev = old.get(id);
      const next = this.all.get(id)!;
      // Keep positions of nodes already on screen.
      return prev ? Object.assign(prev, next, { x: prev.x, y: prev.y }) : { ...next };
    });
    const links = this.visible().links.map((e) => ({ source: e.from, target: e.to, kind: e.kind }));
    this.expandable.clear();
    for (const e of this.edges) {
      if (this.shown.has(e.from) !== this.shown.has(e.to)) this.expandable.add(this.shown.has(e.from) ? e.from : e.to);
    }
    this.view.graphData({ nodes, links });
  }

  private draw(n: GraphNode, ctx: CanvasRenderingContext2D, scale: number): void {
    const r = 5;
    // Negated and quarantined atoms are faded; sealed and tombstoned ones hollow.
    ctx.globalAlpha = n.negated || n.exposure === "quarantined" ? 0.4 : 1;
    ctx.beginPath();
    ctx.arc(n.x!, n.y!, r, 0, 2 * Math.PI);
    if (n.exposure === "sealed" || n.exposure === "tombstoned") {
      ctx.strokeStyle = colourFor(n.type);
      ctx.lineWidth = 1.5 / scale;
      ctx.stroke();
    } else {
      ctx.fillStyle = colourFor(n.type);
      ctx.fill();
    }
    if (this.expandable.has(n.id)) {
      // A ring: this node has neighbours not on screen; click to expand.
      ctx.strokeStyle = colourFor(n.type);
      ctx.lineWidth = 1.2 / scale;
      ctx.beginPath();
      ctx.arc(n.x!, n.y!, r + 2.5, 0, 2 * Math.PI);
      ctx.stroke();
    }
    if (labelsFit(this.el.clientWidth, this.el.clientHeight, scale, this.shown.size)) {
      const text = n.label.length > 28 ? n.label.slice(0, 27) + "…" : n.label;
      ctx.font = `${11 / scale}px system-ui, sans-serif`;
      ctx.fillStyle = "#1d2330";
      ctx.textAlign = "center";
      ctx.textBaseline = "top";
      ctx.fillText(text, n.x!, n.y! + r + 2 / scale);
    }
    ctx.globalAlpha = 1;
  }
}
