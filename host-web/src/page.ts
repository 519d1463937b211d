// The memory page: search, memorize, an atom's history with correct and
// govern actions, stats, and the graph. Everything goes through HmgClient.
//
// URL parameters: store, tenant, workspace, repository, branch.

import { ENUMS } from "../gen/contract.js";
import { HmgClient, type CorrectAction, type GovernAction, type HistoryResult, type RecallResult } from "./client.js";
import { colourFor, MemoryGraph } from "./graph.js";

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
const client = new HmgClient({
  store: params.get("store") ?? "default",
  scope,
  model: modelParam === "none" ? undefined : modelParam,
});
const graph = new MemoryGraph($("graph"));
let lastQuery = "";
let selected = "";

function when(iso: string): string {
  const d = new Date(iso);
  return isNaN(d.getTime()) ? iso : d.toLocaleString();
}

function badge(type: string): HTMLElement {
  const b = h("span", { class: "badge" }, type);
  b.style.background = colourFor(type);
  return b;
}

function atomLink(id: string): HTMLElement {
  const a = h("a", { class: "atom-link mono", "data-atom": id }, id);
  a.addEventListener("click", () => showAtom(id));
  return a;
}

async function refreshStats(): Promise<void> {
  const s = await client.stats();
  $("stats").textContent =
    `${s.atoms} atoms · ${s.edges} edges · keyword ${s.indexes.keyword} · semantic ${s.indexes.semantic}` +
    ` · version ${s.snapshot_version}` +
    (s.indexes.semantic > 0 || !s.model.startsWith("none") ? "" : " · keyword-only");
  const kept = (await client.persisted) ? "persistent" : "best-effort (the browser may evict it under storage pressure)";
  $("stats").title = `model: ${s.model}\nstorage: ${kept}`;
}

async function refreshGraph(): Promise<void> {
  graph.load(await client.export());
  const v = graph.visible();
  $("graph-info").textContent = `${v.nodes.length} atoms, ${v.links.length} edges shown · click a node to expand`;
  $("legend").replaceChildren(
    ...graph.types().map((t) => {
      const dot = h("i");
      dot.style.background = colourFor(t);
      return h("span", {}, dot, t);
    }),
  );
}

function renderResults(result: RecallResult): void {
  const list = $("results");
  if (result.reason) {
    list.replaceChildren(h("li", { class: "status bad" }, result.reason));
    return;
  }
  if (result.atoms.length === 0) {
    list.replaceChildren(h("li", { class: "status" }, "Nothing recalled."));
    return;
  }
  list.replaceChildren(
    ...result.atoms.map((a) => {
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
          badge(a.kind),
          h("span", {}, a.epistemic),
        ),
      );
      li.addEventListener("click", () => showAtom(a.atom_id));
      return li;
    }),
  );
}

async function search(query: string): Promise<void> {
  lastQuery = query;
  if (!query.trim()) {
    $("results").replaceChildren();
    return;
  }
  const include = $<HTMLInputElement>("include-negated").checked;
  renderResults(await client.recall({ query, max_results: 10, include_negated: include }));
}

function table(head: string[], rows: Child[][]): HTMLElement {
  return h(
    "table",
    {},
    h("tr", {}, ...head.map((c) => h("th", {}, c))),
    ...rows.map((r) => h("tr", {}, ...r.map((c) => h("td", {}, c)))),
  );
}

function renderHistory(id: string, hist: HistoryResult): void {
  const box = $("atom");
  if (!hist.current) {
    box.replaceChildren(h("h2", {}, "Atom"), h("p", { class: "status bad" }, hist.reason ?? "unknown atom"));
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
      const r = await client.correct({ target_atom: id, action: action as any, reason, new_content: text, by: "user" });
      return { ...r, shown: r.new_atom_id ?? id };
    },
  );
  const governForm = actionForm(
    "govern",
    GOVERN_HELP,
    { suffix: "lesson", action: "derive_lesson", placeholder: "lesson (derive_lesson)" },
    async (action, reason, text) => {
      const r = await client.govern({ target_atom: id, action: action as any, reason, lesson_content: text, by: "user" });
      return { ...r, shown: r.lesson_atom_id ?? id };
    },
  );

  box.replaceChildren(
    h("h2", {}, "Atom ", h("span", { class: "mono muted", "data-testid": "atom-id" }, c.atom_id)),
    h("div", { class: "content" + (c.negated ? " negated" : ""), "data-testid": "atom-content" }, c.content),
    h(
      "div",
      { class: "meta muted" },
      badge(c.kind),
      ` ${c.epistemic} · ${c.polarity} · ${c.exposure_state}${c.negated ? " · negated" : ""} · ${c.source} · created ${when(c.created_at)}`,
    ),
    h("h3", {}, "Chain"),
    chain.length ? h("div", {}, ...chain) : h("p", { class: "muted" }, "No supersedes or lesson edges."),
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
 * What each action does, in plain words (the option's tooltip). Typed by the
 * WIT's enums: an action the WIT gains and this page does not describe fails
 * the type check (build.mjs runs tsc), and the order is the WIT's.
 */
const CORRECT_HELP = ordered(ENUMS.CorrectAction, {
  negate: "no longer true, no replacement (hidden from recall)",
  confirm_actual: "possible → actual: confirmed",
  confirm_necessary: "→ necessary: a hard constraint",
  demote: "actual/necessary → possible",
  replace: "new content supersedes this memory",
} satisfies Record<CorrectAction, string>);
const GOVERN_HELP = ordered(ENUMS.GovernAction, {
  quarantine: "hide from recall, keep the content (undo with restore)",
  restore: "bring a quarantined memory back",
  seal: "destroy the content for good",
  tombstone: "destroy everything but id and timestamps",
  derive_lesson: "keep a redacted lesson, seal the original",
} satisfies Record<GovernAction, string>);

function ordered<K extends string>(order: readonly K[], help: Record<K, string>): Record<string, string> {
  return Object.fromEntries(order.map((k) => [k, help[k]]));
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
  send: (action: string, reason: string, text: string | undefined) => Promise<{ effect: string; reason?: string; shown: string }>,
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
    await afterChange(r.shown, r.effect, r.reason, `${name}-status`);
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

async function afterChange(id: string, effect: string, reason: string | undefined, statusId: string): Promise<void> {
  await showAtom(id);
  const status = $(statusId);
  if (status) {
    status.textContent = effect + (reason ? `: ${reason}` : "");
    status.classList.toggle("bad", effect === "rejected");
  }
  await Promise.all([refreshStats(), refreshGraph(), search(lastQuery)]);
}

$("search-form").addEventListener("submit", (e) => {
  e.preventDefault();
  void search($<HTMLInputElement>("query").value);
});

$("memorize-form").addEventListener("submit", async (e) => {
  e.preventDefault();
  const content = $<HTMLTextAreaElement>("content").value;
  const r = await client.memorize({ content, source: $<HTMLSelectElement>("source").value });
  const status = $("memorize-status");
  status.textContent = r.effect + (r.reason ? `: ${r.reason}` : r.atom_id ? ` ${r.atom_id}` : "");
  status.classList.toggle("bad", r.effect === "rejected");
  if (r.effect === "applied") $<HTMLTextAreaElement>("content").value = "";
  await Promise.all([refreshStats(), refreshGraph()]);
});

graph.onSelect = (id) => void showAtom(id);
// Another tab wrote: its atoms appear in the stats and the graph here too
// (the atom panel is left alone: someone may be typing in its forms).
client.onChange(() => void Promise.all([refreshStats(), refreshGraph()]));
$("scope").textContent = [scope.tenant_id, scope.workspace, scope.repository, scope.branch].filter(Boolean).join(" / ");

// For tests and for a web agent sharing the page: the client and the page's views.
Object.assign(window, { client, HmgClient, hmgPage: { graph, refresh: () => Promise.all([refreshStats(), refreshGraph()]), showAtom, search } });

client.ready
  .then(() => Promise.all([refreshStats(), refreshGraph()]))
  .then(
    () => Object.assign(window, { hmgReady: true }),
    (e: Error) => {
      $("stats").textContent = `failed: ${e.message}`;
      Object.assign(window, { hmgError: e.message });
    },
  );
