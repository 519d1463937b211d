// The memory page: search (with kind / source / date filters), memorize, a
// conversation box that captures from a turn, an atom's history with correct
// and govern actions, an entity's panel, stats in plain words, and the
// knowledge graph (hubs, facts, entities; drill-down, path finding, type
// filter). Everything goes through HmgClient. A privacy panel sets which
// personal data the store hides (the store-config `personal_data` policy),
// kept in localStorage per store and applied by reopening the store.
//
// URL parameters: store, tenant, workspace, repository, branch, model.

import { ENUMS } from "../gen/contract.js";
import {
  HmgClient,
  type CorrectAction,
  type GovernAction,
  type HistoryResult,
  type ObserveResult,
  type RecallResult,
  type StoreConfig,
} from "./client.js";
import {
  colourOf,
  djb2,
  entityColour,
  entityId,
  FACT_COLOUR,
  type GraphNode,
  HUB_COLOUR,
  labelsFit,
  MemoryGraph,
} from "./graph.js";

type Child = Node | string | null | undefined | false;

/** Builds an element; text goes in as text, never as HTML. */
function h(tag: string, attrs: Record<string, string> = {}, ...children: Child[]): HTMLElement {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, v);
  for (const c of children) if (c) el.append(c);
  return el;
}

const $ = <T extends HTMLElement = HTMLElement>(id: string) => document.getElementById(id) as T;

const params = new URLSearchParams(location.search);
const scope = {
  tenant_id: params.get("tenant") ?? "local",
  workspace: params.get("workspace") ?? undefined,
  repository: params.get("repository") ?? undefined,
  branch: params.get("branch") ?? undefined,
};
// The model the server offers under ./model/ unless `?model=none` (keyword-only) or another URL.
const modelParam = params.get("model") ?? "./model/";
const storeName = params.get("store") ?? "default";

// Which personal data this store hides: the engine's defaults (cards and
// national IDs yes, e-mail and phone no) unless this browser saved a choice.
type PersonalData = NonNullable<StoreConfig["personal_data"]>;
const PERSONAL_KINDS = ["payment_cards", "national_ids", "emails", "phones"] as const;
const privacyKey = `hmg:personal-data:${storeName}`;
function savedPersonalData(): PersonalData {
  const policy: PersonalData = { payment_cards: true, national_ids: true, emails: false, phones: false };
  try {
    const saved = JSON.parse(localStorage.getItem(privacyKey) ?? "{}");
    for (const k of PERSONAL_KINDS) if (typeof saved[k] === "boolean") policy[k] = saved[k];
  } catch {
    // an unreadable saved choice falls back to the defaults
  }
  return policy;
}
const personalData = savedPersonalData();

const client = new HmgClient({
  store: storeName,
  scope,
  model: modelParam === "none" ? undefined : modelParam,
  config: { personal_data: personalData },
});
const graph = new MemoryGraph($("graph"));
let lastQuery = "";
let lastHits: RecallResult | undefined;
let selected = "";

function when(iso: string): string {
  const d = new Date(iso);
  return isNaN(d.getTime()) ? iso : d.toLocaleString();
}

function badge(type: string, colour: string): HTMLElement {
  const b = h("span", { class: "badge" }, type);
  b.style.background = colour;
  return b;
}

function atomLink(id: string): HTMLElement {
  const a = h("a", { class: "atom-link mono", "data-atom": id }, id);
  a.addEventListener("click", () => showAtom(id));
  return a;
}

/** Sets a status line: plain words, the raw effect kept in `data-effect` for machines. */
function status(id: string, effect: string, text: string): void {
  const el = $(id);
  if (!el) return;
  el.textContent = text;
  el.dataset.effect = effect;
  el.classList.toggle("bad", effect === "rejected");
}

const PERSONAL_WORDS: Record<string, string> = {
  "payment-card": "card number",
  "national-id": "national ID number",
  email: "e-mail address",
  phone: "phone number",
};

/** What a result says was redacted, in plain words: secrets by kind, personal data by name. */
function redactionNote(redactions: { kind: string; count: number }[]): string {
  const words = (list: { kind: string; count: number }[], name: (k: string) => string) =>
    list.map((r) => (r.count > 1 ? `${r.count} × ${name(r.kind)}` : name(r.kind))).join(", ");
  const personal = redactions.filter((r) => r.kind in PERSONAL_WORDS);
  const secrets = redactions.filter((r) => !(r.kind in PERSONAL_WORDS));
  const count = (list: { count: number }[]) => list.reduce((n, r) => n + r.count, 0);
  let note = "";
  if (secrets.length) note += ` Secret${count(secrets) > 1 ? "s" : ""} hidden before storing: ${words(secrets, (k) => k.replaceAll(/[_-]/g, " "))}.`;
  if (personal.length) note += ` Personal data hidden before storing: ${words(personal, (k) => PERSONAL_WORDS[k])}.`;
  return note;
}

async function refreshStats(): Promise<void> {
  const s = await client.stats();
  const search = s.indexes.semantic > 0 || !s.model.startsWith("none") ? "search by meaning and words" : "search by words only (no model)";
  // Bytes recovery did not apply (a write cut short): said in plain words.
  const aside = s.kept_aside.length === 0 ? "" : ` · ${s.kept_aside.length} damaged file${s.kept_aside.length > 1 ? "s" : ""} kept aside (${s.kept_aside.map((f) => `${f.name}, ${f.bytes} bytes`).join("; ")})`;
  $("stats").textContent = `${s.atoms} memories · ${s.edges} links · ${search}${aside}`;
  for (const note of await client.notices()) console.warn(`hmg: ${note}`);
  const kept = (await client.persisted) ? "persistent" : "best-effort (the browser may evict it under storage pressure)";
  $("stats").title = `model: ${s.model}\nstorage: ${kept}\nindexes: keyword ${s.indexes.keyword}, semantic ${s.indexes.semantic}; version ${s.snapshot_version}`;
  $("empty-hint").hidden = s.atoms > 0;
}

async function refreshGraph(fit = false): Promise<void> {
  const jsonl = await client.export();
  const atoms = [];
  const edges = [];
  for (const line of jsonl.split("\n")) {
    if (!line.trim()) continue;
    const rec = JSON.parse(line);
    if (rec.type === "atom") atoms.push(rec);
    else if (rec.type === "edge") edges.push(rec);
  }
  const view = await client.graphView({ limit: 500 });
  graph.load({
    atoms,
    edges,
    entities: view.nodes,
    mentions: view.mentions,
    triples: view.edges,
  });
  renderLegend();
  renderTypeFilters();
  const v = graph.visible();
  $("graph-info").textContent = `${v.nodes.length} nodes, ${v.links.length} links shown · click a node to open it and show its neighbours`;
  // Zoom to fit once the layout has settled (not awaited: an empty graph may never move).
  if (fit) void graph.settled().then(() => graph.fit());
}

function renderLegend(): void {
  const dot = (colour: string, label: string) => {
    const i = h("i");
    i.style.background = colour;
    return h("span", { "data-type": label }, i, label);
  };
  $("legend").replaceChildren(
    dot(HUB_COLOUR, "hub"),
    dot(FACT_COLOUR, "memory"),
    ...graph.entityTypes().map((t) => dot(entityColour(t), t)),
  );
}

function renderTypeFilters(): void {
  const box = $("type-filters");
  box.replaceChildren(
    ...graph.entityTypes().map((t) => {
      const input = h("input", { type: "checkbox", value: t }) as HTMLInputElement;
      input.checked = !graph.filters.hiddenTypes.has(t);
      input.addEventListener("change", () => {
        if (input.checked) graph.filters.hiddenTypes.delete(t);
        else graph.filters.hiddenTypes.add(t);
        graph.refilter();
      });
      const label = h("label", { class: "chip" }, input, t);
      label.style.borderColor = entityColour(t);
      return label;
    }),
  );
}

/** The kind / source / date filters, shared by the results and the graph. */
function readFilters(): void {
  graph.filters.kind = $<HTMLSelectElement>("filter-kind").value;
  graph.filters.source = $<HTMLInputElement>("filter-source").value.trim();
  graph.filters.from = $<HTMLInputElement>("filter-from").value;
  graph.filters.to = $<HTMLInputElement>("filter-to").value;
}

function keptByFilters(a: { kind: string; source: string; created_at: string }): boolean {
  const f = graph.filters;
  const day = a.created_at.slice(0, 10);
  return (!f.kind || a.kind === f.kind) && (!f.source || a.source === f.source) && (!f.from || day >= f.from) && (!f.to || day <= f.to);
}

function renderResults(result: RecallResult): void {
  const list = $("results");
  if (result.reason) {
    list.replaceChildren(h("li", { class: "status bad" }, result.reason));
    return;
  }
  const atoms = result.atoms.filter(keptByFilters);
  if (atoms.length === 0) {
    list.replaceChildren(h("li", { class: "status" }, result.atoms.length ? "Nothing matches the filters." : "Nothing recalled."));
    graph.highlight([]);
    return;
  }
  list.replaceChildren(
    ...atoms.map((a) => {
      const li = h(
        "li",
        { class: "hit" + (a.atom_id === selected ? " selected" : ""), "data-atom": a.atom_id },
        h("div", { class: a.negated ? "negated" : "" }, a.content),
        h(
          "div",
          { class: "meta" },
          h("span", { class: "score", title: "score" }, a.score.toFixed(2)),
          h("span", { title: "created at" }, when(a.created_at)),
          h("span", { title: "source" }, a.source),
          badge(a.kind, FACT_COLOUR),
          h("span", {}, a.epistemic),
        ),
      );
      li.addEventListener("click", () => showAtom(a.atom_id));
      return li;
    }),
  );
  // Search hits ringed in the graph.
  graph.highlight(atoms.map((a) => a.atom_id));
}

async function search(query: string): Promise<void> {
  lastQuery = query;
  if (!query.trim()) {
    $("results").replaceChildren();
    graph.highlight([]);
    return;
  }
  const include = $<HTMLInputElement>("include-negated").checked;
  lastHits = await client.recall({ query, max_results: 20, include_negated: include });
  renderResults(lastHits);
}

function table(head: string[], rows: Child[][]): HTMLElement {
  return h(
    "table",
    {},
    h("tr", {}, ...head.map((c) => h("th", {}, c))),
    ...rows.map((r) => h("tr", {}, ...r.map((c) => h("td", {}, c)))),
  );
}

/**
 * What each action does, in plain words (the option's tooltip and the
 * status after it ran). Typed by the WIT's enums: an action the WIT gains
 * and this page does not describe fails the type check (build.mjs runs tsc),
 * and the order is the WIT's.
 */
const CORRECT_HELP = ordered(ENUMS.CorrectAction, {
  negate: "no longer true, no replacement (hidden from recall)",
  confirm_actual: "possible → actual: confirmed",
  confirm_necessary: "→ necessary: a hard constraint",
  demote: "actual/necessary → possible",
  replace: "new content supersedes this memory",
} satisfies Record<CorrectAction, string>);
const CORRECT_DONE: Record<CorrectAction, string> = {
  negate: "Marked as no longer true; recall hides it.",
  confirm_actual: "Confirmed: now counted as actual.",
  confirm_necessary: "Now a hard constraint.",
  demote: "Demoted to possible.",
  replace: "Replaced by a new version; the old one stays in the history.",
};
const GOVERN_HELP = ordered(ENUMS.GovernAction, {
  quarantine: "hide from recall, keep the content (undo with restore)",
  restore: "bring a quarantined memory back",
  seal: "destroy the content for good",
  tombstone: "destroy everything but id and timestamps",
  derive_lesson: "keep a redacted lesson, seal the original",
} satisfies Record<GovernAction, string>);
const GOVERN_DONE: Record<GovernAction, string> = {
  quarantine: "Hidden from recall; restore brings it back.",
  restore: "Visible again.",
  seal: "Content destroyed in every file; the history keeps that it existed.",
  tombstone: "Destroyed with its source and reasons; only the id and times remain.",
  derive_lesson: "Lesson kept as a new memory; the original content is destroyed.",
};

function ordered<K extends string>(order: readonly K[], help: Record<K, string>): Record<string, string> {
  return Object.fromEntries(order.map((k) => [k, help[k]]));
}

function renderHistory(id: string, hist: HistoryResult): void {
  const box = $("atom");
  if (!hist.current) {
    box.replaceChildren(h("h2", {}, "Memory"), h("p", { class: "status bad" }, hist.reason ?? "unknown memory"));
    return;
  }
  const c = hist.current;
  const rel = hist.relations;
  const chain: Child[] = [];
  if (rel.supersedes.length) chain.push(h("div", {}, "supersedes ", ...rel.supersedes.map(atomLink)));
  if (rel.superseded_by.length) chain.push(h("div", {}, "superseded by ", ...rel.superseded_by.map(atomLink)));
  if (rel.related_lessons.length) chain.push(h("div", {}, "related lessons ", ...rel.related_lessons.map(atomLink)));

  const correctForm = actionForm(
    "correct",
    CORRECT_HELP,
    { suffix: "new", action: "replace", placeholder: "new content (replace)" },
    async (action, reason, text) => {
      const r = await client.correct({ target_atom: id, action: action as CorrectAction, reason, new_content: text, by: "user" });
      return { ...r, shown: r.new_atom_id ?? id, done: CORRECT_DONE[action as CorrectAction] };
    },
  );
  const governForm = actionForm(
    "govern",
    GOVERN_HELP,
    { suffix: "lesson", action: "derive_lesson", placeholder: "lesson (derive_lesson)" },
    async (action, reason, text) => {
      const r = await client.govern({ target_atom: id, action: action as GovernAction, reason, lesson_content: text, by: "user" });
      return { ...r, shown: r.lesson_atom_id ?? id, done: GOVERN_DONE[action as GovernAction] };
    },
  );

  box.replaceChildren(
    h("h2", {}, "Memory ", h("span", { class: "mono muted", "data-testid": "atom-id" }, c.atom_id)),
    h("div", { class: "content" + (c.negated ? " negated" : ""), "data-testid": "atom-content" }, c.content),
    h(
      "div",
      { class: "meta muted" },
      badge(c.kind, FACT_COLOUR),
      ` ${c.epistemic} · ${c.polarity} · ${c.exposure_state}${c.negated ? " · negated" : ""}${c.superseded_by ? " · replaced" : ""} · ${c.source} · created ${when(c.created_at)}`,
    ),
    h("h3", {}, "Chain"),
    chain.length ? h("div", {}, ...chain) : h("p", { class: "muted" }, "No supersedes or lesson edges."),
    hist.triples.length === 0
      ? ""
      : h(
          "div",
          {},
          h("h3", {}, "Knowledge graph"),
          table(
            ["source", "relation", "target", "until"],
            hist.triples.map((t) => [t.source, t.relation, t.target, t.invalid_at ? when(t.invalid_at) : "now"]),
          ),
        ),
    h("h3", {}, "Corrections"),
    hist.corrections.length
      ? table(
          ["action", "change", "reason", "by", "at"],
          hist.corrections.map((r) => [r.action, r.change, r.reason, r.by, when(r.at)]),
        )
      : h("p", { class: "muted" }, "None."),
    h("h3", {}, "Exposure"),
    hist.exposure_history.length
      ? table(
          ["from", "to", "reason", "by", "at"],
          hist.exposure_history.map((r) => [r.from, r.to, r.reason, r.by, when(r.at)]),
        )
      : h("p", { class: "muted" }, "Never governed."),
    correctForm,
    governForm,
  );
}

/**
 * The correct or govern form (element ids `<name>-form`, `-action`, `-reason`,
 * `-<text.suffix>`, `-status`): an action, a reason, and the text that one
 * action needs. `send` makes the call and names the atom to show afterwards.
 */
function actionForm(
  name: "correct" | "govern",
  help: Record<string, string>,
  text: { suffix: string; action: string; placeholder: string },
  send: (
    action: string,
    reason: string,
    text: string | undefined,
  ) => Promise<{ effect: string; reason?: string; shown: string; done: string }>,
): HTMLElement {
  const label = name[0].toUpperCase() + name.slice(1);
  const form = h(
    "form",
    { id: `${name}-form` },
    h("strong", {}, `${label} `),
    h("select", { id: `${name}-action` }, ...Object.entries(help).map(([a, title]) => h("option", { value: a, title }, a))),
    h("input", { id: `${name}-reason`, placeholder: "reason (required)" }),
    h("textarea", { id: `${name}-${text.suffix}`, rows: "2", placeholder: text.placeholder }),
    h("div", { class: "row" }, h("button", { type: "submit" }, label), h("span", { class: "status", id: `${name}-status` })),
  );
  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    const action = $<HTMLSelectElement>(`${name}-action`).value;
    const extra = action === text.action ? $<HTMLTextAreaElement>(`${name}-${text.suffix}`).value : undefined;
    const r = await send(action, $<HTMLInputElement>(`${name}-reason`).value, extra);
    await showAtom(r.shown);
    status(`${name}-status`, r.effect, r.effect === "applied" ? r.done : `Not done: ${r.reason ?? r.effect}`);
    await Promise.all([refreshStats(), refreshGraph(), search(lastQuery)]);
  });
  return form;
}

async function showAtom(id: string): Promise<void> {
  selected = id;
  for (const li of document.querySelectorAll(".hit")) {
    li.classList.toggle("selected", (li as HTMLElement).dataset.atom === id);
  }
  renderHistory(id, await client.history({ atom_id: id }));
}

/** An entity's panel: what it is, the memories naming it, its neighbourhood. */
async function showEntity(node: GraphNode): Promise<void> {
  const around = await client.neighborhood({ entity: node.label, depth: 1, limit: 60 });
  graph.merge(around.nodes, around.edges);
  graph.focus(node.id);
  const self = around.nodes.find((n) => n.name === node.label);
  const facts = graph.factsOf(node.id);
  const box = $("atom");
  box.replaceChildren(
    h("h2", {}, "Entity ", h("span", { "data-testid": "entity-name" }, node.label)),
    h("div", { class: "meta muted" }, badge(node.type || "entity", colourOf(node)), ` named by ${self?.atom_count ?? facts.length} memories`),
    h("h3", {}, "Links"),
    around.edges.length
      ? table(
          ["source", "relation", "target", "memory"],
          around.edges.map((e) => [e.source, e.relation, e.target, atomLink(e.atom_id)]),
        )
      : h("p", { class: "muted" }, around.reason ?? "No links."),
    h("h3", {}, "Memories"),
    facts.length
      ? h("ul", {}, ...facts.map((f) => h("li", {}, atomLink(f.id), " ", f.label)))
      : h("p", { class: "muted" }, "Click the entity again to show them in the graph."),
  );
}

$("search-form").addEventListener("submit", (e) => {
  e.preventDefault();
  readFilters();
  graph.refilter();
  void search($<HTMLInputElement>("query").value);
});
for (const id of ["filter-kind", "filter-source", "filter-from", "filter-to"]) {
  $(id).addEventListener("change", () => {
    readFilters();
    graph.refilter();
    if (lastHits) renderResults(lastHits);
  });
}

$("memorize-form").addEventListener("submit", async (e) => {
  e.preventDefault();
  const content = $<HTMLTextAreaElement>("content").value;
  const r = await client.memorize({ content, source: $<HTMLSelectElement>("source").value });
  if (r.effect === "applied") {
    status("memorize-status", r.effect, `Remembered as ${r.atom_id}.${redactionNote(r.redactions)}`);
    $<HTMLTextAreaElement>("content").value = "";
  } else if (r.effect === "no_op") {
    status("memorize-status", r.effect, `Already remembered: the same as ${r.deduped_with}.`);
  } else {
    status("memorize-status", r.effect, `Not stored: ${r.reason}`);
  }
  await Promise.all([refreshStats(), refreshGraph()]);
});

function renderObserved(r: ObserveResult): void {
  const list = $("observe-result");
  const head = r.excluded
    ? `Nothing captured: this reads as ${r.excluded.replaceAll("_", " ")}.`
    : r.candidates.length
      ? `Mode ${r.mode}: captures what scores ${r.threshold.toFixed(2)} or more.`
      : "Nothing in this turn to remember.";
  list.replaceChildren(
    h("li", { class: "status" }, r.reason ?? head),
    ...r.candidates.map((c) => {
      const verdict = c.effect === "applied" ? "captured" : c.effect === "no_op" ? "already known" : c.captured ? "would capture" : "not captured";
      return h(
        "li",
        { class: "candidate", "data-captured": String(c.captured) },
        h("span", { class: "score" }, c.confidence.toFixed(2)),
        " ",
        badge(c.signal.replaceAll("_", " "), c.captured ? FACT_COLOUR : "#94a3b8"),
        " ",
        c.content,
        h("div", { class: "meta" }, verdict, c.atom_id ? " · " : "", c.atom_id ? atomLink(c.atom_id) : null, c.reason ? ` · ${c.reason}` : ""),
      );
    }),
  );
}

$("observe-form").addEventListener("submit", async (e) => {
  e.preventDefault();
  const r = await client.observe({
    turn: $<HTMLTextAreaElement>("turn").value,
    mode: $<HTMLSelectElement>("observe-mode").value as ObserveResult["mode"],
    role: $<HTMLSelectElement>("observe-role").value as "user" | "assistant",
    dry_run: $<HTMLInputElement>("observe-dry").checked,
  });
  renderObserved(r);
  if (r.candidates.some((c) => c.effect === "applied")) await Promise.all([refreshStats(), refreshGraph()]);
});

$("path-form").addEventListener("submit", async (e) => {
  e.preventDefault();
  const from = $<HTMLInputElement>("path-from").value;
  const to = $<HTMLInputElement>("path-to").value;
  const r = await client.shortestPath({ from, to });
  if (r.found) {
    graph.merge(r.nodes, r.edges);
    graph.showPath(r.nodes.map((n) => n.name));
    $("path-result").textContent = r.nodes.map((n) => n.name).join(" → ");
    await graph.settled();
    graph.fit();
  } else {
    graph.showPath([]);
    $("path-result").textContent = r.reason ?? "No path between them in this scope.";
  }
});

$("graph-fit").addEventListener("click", () => graph.fit());

// The privacy panel: shows the policy in force; Apply saves the choice and
// reopens the store with it (the policy is part of the store's config).
for (const k of PERSONAL_KINDS) ($(`pd-${k}`) as HTMLInputElement).checked = personalData[k];
$("privacy-apply").addEventListener("click", () => {
  const choice = Object.fromEntries(PERSONAL_KINDS.map((k) => [k, ($(`pd-${k}`) as HTMLInputElement).checked]));
  localStorage.setItem(privacyKey, JSON.stringify(choice));
  location.reload();
});

graph.onSelect = (node) => {
  if (node.kind === "fact") void showAtom(node.id);
  else if (node.kind === "entity") void showEntity(node);
};
// Another tab wrote: its memories appear in the stats and the graph here too
// (the detail panel is left alone: someone may be typing in its forms).
client.onChange(() => void Promise.all([refreshStats(), refreshGraph()]));
const progressSeen = { events: 0, bytes: 0, done: false };
client.onProgress((p) => {
  progressSeen.events++;
  progressSeen.bytes = Math.max(progressSeen.bytes, p.loaded);
  progressSeen.done = p.done;
  const bar = $<HTMLProgressElement>("progress");
  const label = $("progress-label");
  if (p.done) {
    bar.hidden = true;
    label.textContent = "";
    return;
  }
  bar.hidden = false;
  bar.max = p.total || 1;
  bar.value = p.loaded;
  const mb = (n: number) => (n / 1e6).toFixed(0);
  label.textContent = p.total
    ? `Downloading the search model (once): ${mb(p.loaded)} of ${mb(p.total)} MB`
    : `Loading the search model: ${mb(p.loaded)} MB`;
});
$("scope").textContent = [scope.tenant_id, scope.workspace, scope.repository, scope.branch].filter(Boolean).join(" / ");

// For tests and for a web agent sharing the page: the client and the page's views.
Object.assign(window, {
  client,
  HmgClient,
  hmgPage: {
    graph,
    refresh: () => Promise.all([refreshStats(), refreshGraph()]),
    showAtom,
    search,
    entityId,
    labelsFit,
    djb2,
    progressSeen,
  },
});

client.ready
  .then(() => Promise.all([refreshStats(), refreshGraph(true)]))
  .then(
    () => Object.assign(window, { hmgReady: true }),
    (e: Error) => {
      $("stats").textContent = `failed: ${e.message}`;
      Object.assign(window, { hmgError: e.message });
    },
  );
