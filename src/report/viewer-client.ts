/**
 * The episode browser that runs in the page, shared by `reflect view` (which serves its data at `api/data`) and the
 * report (which embeds it in `<script type="application/json" id="reflect-data">`). Plain ES2020 with no
 * dependencies, kept as a string so both pages inline it: nothing is fetched from the network at view time. Its state
 * lives in the URL's hash (`#run=0&episode=ID&filter=fixed&q=text&task=T&instruction=I`), so links from the report's
 * charts and tables open an episode or a filtered list, and a reload keeps the view. Text is set with `textContent`
 * only; model output never becomes markup.
 */
export const VIEWER_SCRIPT = String.raw`
(function () {
  "use strict";
  var root = document.getElementById("viewer");
  if (!root) return;
  var FILTERS = [
    ["all", "all episodes"],
    ["fixed", "fixed: first attempt not right, returned answer right"],
    ["broken", "broken: first attempt right, returned answer not right"],
    ["unchanged", "unchanged: no retry changed the answer"],
    ["never-solved", "never solved: no attempt right"],
    ["first-try", "solved at the first attempt"],
    ["w2r", "has a wrong→right retry"],
    ["r2w", "has a right→wrong retry"],
    ["w2w", "has a wrong→wrong retry"],
    ["r2r", "has a right→right retry"]
  ];
  var LIST_LIMIT = 400;
  var data = null;
  var haystacks = new Map();

  function h(tag, attrs) {
    var node = document.createElement(tag);
    if (attrs) for (var k in attrs) {
      if (attrs[k] === undefined || attrs[k] === null) continue;
      if (k === "text") node.textContent = String(attrs[k]);
      else if (k === "onclick" || k === "oninput" || k === "onchange") node[k] = attrs[k];
      else node.setAttribute(k, String(attrs[k]));
    }
    for (var i = 2; i < arguments.length; i++) {
      var c = arguments[i];
      if (c === null || c === undefined || c === false) continue;
      node.appendChild(typeof c === "string" ? document.createTextNode(c) : c);
    }
    return node;
  }

  function readState() {
    var p = new URLSearchParams(location.hash.replace(/^#/, ""));
    return { run: p.get("run") === null ? null : Number(p.get("run")), episode: p.get("episode"), filter: p.get("filter") || "all", q: p.get("q") || "", task: p.get("task"), instruction: p.get("instruction") };
  }

  function hashOf(state) {
    var p = new URLSearchParams();
    if (state.run !== null && state.run !== undefined && !Number.isNaN(state.run)) p.set("run", String(state.run));
    if (state.filter && state.filter !== "all") p.set("filter", state.filter);
    if (state.q) p.set("q", state.q);
    if (state.task) p.set("task", state.task);
    if (state.instruction) p.set("instruction", state.instruction);
    if (state.episode) p.set("episode", state.episode);
    return "#" + p.toString();
  }

  function setState(patch) {
    var next = Object.assign(readState(), patch);
    history.replaceState(null, "", hashOf(next));
    render(false);
  }

  function haystack(e) {
    var s = haystacks.get(e);
    if (s === undefined) {
      var parts = [e.id, e.task, e.question];
      e.steps.forEach(function (st) { parts.push(st.output, st.feedback, st.answer || ""); if (st.reflection) parts.push(st.reflection.output); });
      s = parts.join("\n").toLowerCase();
      haystacks.set(e, s);
    }
    return s;
  }

  function selectedRun(state) {
    if (state.run !== null && !Number.isNaN(state.run) && data.runs[state.run]) return state.run;
    return data.runs.length > 1 ? null : 0;
  }

  function filtered(state) {
    var run = selectedRun(state);
    var q = state.q.toLowerCase();
    return data.episodes.filter(function (e) {
      if (run !== null && e.run !== run) return false;
      if (state.filter !== "all" && e.tags.indexOf(state.filter) < 0) return false;
      if (state.task && e.task !== state.task) return false;
      if (state.instruction && (!e.instructions || e.instructions.indexOf(state.instruction) < 0)) return false;
      if (q && haystack(e).indexOf(q) < 0) return false;
      return true;
    });
  }

  function verdictBadge(correct) {
    return h("span", { class: "badge " + (correct === true ? "right" : correct === false ? "wrong" : "unjudged"), text: correct === true ? "right" : correct === false ? "wrong" : "not judged" });
  }

  function block(title, body, cls) {
    return h("div", { class: "block " + (cls || "") }, h("div", { class: "block-title", text: title }), h("pre", { text: body }));
  }

  function diffView(diff) {
    var wrap = h("div", { class: "diff-wrap" });
    var mode = "words";
    var pre = h("pre", { class: "diff" });
    function fill() {
      pre.textContent = "";
      (mode === "lines" && diff.lines ? diff.lines : diff.words).forEach(function (part) {
        pre.appendChild(part[0] === 1 ? h("ins", { text: part[1] }) : part[0] === -1 ? h("del", { text: part[1] }) : document.createTextNode(part[1]));
      });
    }
    var same = diff.words.every(function (part) { return part[0] === 0; });
    var title = h("div", { class: "block-title" }, "diff against " + diff.against + (same ? ": identical output " : " "));
    if (diff.lines) title.appendChild(h("button", { type: "button", class: "diff-mode", text: "line diff", onclick: function (ev) { mode = mode === "words" ? "lines" : "words"; ev.target.textContent = mode === "words" ? "line diff" : "word diff"; fill(); } }));
    fill();
    wrap.appendChild(title);
    wrap.appendChild(pre);
    return wrap;
  }

  function stepView(step, index) {
    var card = h("section", { class: "step", "data-step": index });
    if (step.reflection) {
      var r = h("div", { class: "reflection" }, h("div", { class: "step-title", text: step.reflection.label }));
      if (step.reflection.feedbackShown) r.appendChild(block("feedback shown to the model", step.reflection.feedbackShown, "feedback-shown"));
      if (step.reflection.request) { var d = h("details", {}, h("summary", { text: "reflection request" }), h("pre", { text: step.reflection.request })); r.appendChild(d); }
      r.appendChild(block("reflection", step.reflection.output, "reflection-text"));
      card.appendChild(r);
    }
    var head = h("div", { class: "step-title" }, step.label + " ", verdictBadge(step.correct), step.answer !== null ? h("span", { class: "answer", text: "answer: " + step.answer }) : null,
      h("span", { class: "meta", text: step.tokens + " tokens · " + Math.round(step.ms) + " ms" + (step.decision ? " · " + step.decision : "") + (step.selected !== undefined && step.selected !== (step.turn !== undefined ? step.turn : index + 1) ? " · holds attempt " + step.selected : "") }));
    card.appendChild(head);
    if (step.lessons && step.lessons.length) card.appendChild(block("lessons recalled", step.lessons.map(function (l, i) { return (i + 1) + ". " + l; }).join("\n"), "lessons"));
    if (step.prompt !== null && index > 0) card.appendChild(h("details", {}, h("summary", { text: "request" }), h("pre", { text: step.prompt })));
    card.appendChild(block("output", step.output, "output"));
    if (step.feedback) card.appendChild(block("verifier feedback", step.feedback, "verifier-feedback"));
    step.checks.forEach(function (c) {
      if (c.source === "verifier") return;
      card.appendChild(block(c.source + " check: " + (c.pass === true ? "pass" : c.pass === false ? "fail" : "cannot judge") + " (score " + c.score + ")" + (c.categories && c.categories.length ? " · " + c.categories.join(", ") : ""), c.feedback || c.output || "", "check"));
    });
    if (step.diff) card.appendChild(diffView(step.diff));
    return card;
  }

  function detailView(e) {
    var run = data.runs[e.run];
    var box = h("article", { id: "episode-detail", "data-episode-id": e.id, "data-run": e.run });
    box.appendChild(h("h3", {}, e.id + " ", verdictBadge(e.correct)));
    box.appendChild(h("p", { class: "meta", text: (run ? run.label + " · " + run.model + (run.strategy ? " · " + run.strategy : "") + " · " : "") + e.task + (e.stoppedBy ? " · stopped by " + e.stoppedBy : "") + (e.tags.length ? " · " + e.tags.join(", ") : "") }));
    if (e.error) box.appendChild(block("error", e.error, "error"));
    box.appendChild(block("question", e.steps[0] && e.steps[0].prompt ? e.steps[0].prompt : e.question, "question"));
    e.steps.forEach(function (s, i) { box.appendChild(stepView(s, i)); });
    return box;
  }

  function render(scroll) {
    var state = readState();
    var run = selectedRun(state);
    var list = filtered(state);
    root.textContent = "";
    var controls = h("div", { class: "controls" });
    if (data.runs.length > 1) {
      var runSelect = h("select", { id: "run-select", "aria-label": "run", onchange: function (ev) { setState({ run: ev.target.value === "" ? null : Number(ev.target.value), episode: null }); } }, h("option", { value: "", text: "all runs" }));
      data.runs.forEach(function (r) { var o = h("option", { value: r.index, text: r.label }); if (run === r.index) o.selected = true; runSelect.appendChild(o); });
      controls.appendChild(runSelect);
    }
    var filterSelect = h("select", { id: "filter-select", "aria-label": "filter", onchange: function (ev) { setState({ filter: ev.target.value }); } });
    FILTERS.forEach(function (f) { var o = h("option", { value: f[0], text: f[1] }); if (state.filter === f[0]) o.selected = true; filterSelect.appendChild(o); });
    controls.appendChild(filterSelect);
    var search = h("input", { id: "search", type: "search", placeholder: "search ids, questions, outputs, reflections", value: state.q });
    search.addEventListener("change", function () { setState({ q: search.value }); });
    search.addEventListener("keydown", function (ev) { if (ev.key === "Enter") setState({ q: search.value }); });
    controls.appendChild(search);
    if (state.task) controls.appendChild(h("button", { type: "button", class: "chip", text: "task: " + state.task + " ✕", onclick: function () { setState({ task: null }); } }));
    if (state.instruction) controls.appendChild(h("button", { type: "button", class: "chip", text: "instruction: " + state.instruction + " ✕", onclick: function () { setState({ instruction: null }); } }));
    controls.appendChild(h("span", { id: "episode-count", class: "meta", text: list.length + " episode" + (list.length === 1 ? "" : "s") }));
    root.appendChild(controls);
    var layout = h("div", { class: "viewer-layout" });
    var ul = h("ul", { class: "episode-list" });
    list.slice(0, LIST_LIMIT).forEach(function (e) {
      var href = hashOf(Object.assign({}, state, { run: data.runs.length > 1 ? e.run : state.run, episode: e.id }));
      var active = state.episode === e.id && (run === null ? state.run === null || state.run === e.run : e.run === run);
      ul.appendChild(h("li", { class: active ? "active" : "" }, h("a", { class: "episode-link", href: href, "data-episode-id": e.id }, verdictBadge(e.correct), " " + e.id + (data.runs.length > 1 && run === null ? " · " + data.runs[e.run].label : ""))));
    });
    if (list.length > LIST_LIMIT) ul.appendChild(h("li", { class: "meta", text: "… " + (list.length - LIST_LIMIT) + " more: narrow the search" }));
    layout.appendChild(ul);
    var selected = state.episode === null ? null : data.episodes.find(function (e) { return e.id === state.episode && (run === null || e.run === run); });
    layout.appendChild(selected ? detailView(selected) : h("article", { id: "episode-detail", class: "empty", text: state.episode ? "no episode " + state.episode + " in this run" : "pick an episode" }));
    root.appendChild(layout);
    if (scroll && state.episode && root.scrollIntoView) root.scrollIntoView();
  }

  function start(loaded) {
    data = loaded;
    root.setAttribute("data-ready", "true");
    render(Boolean(readState().episode));
    window.addEventListener("hashchange", function () { render(true); });
  }

  var tag = document.getElementById("reflect-data");
  if (tag) start(JSON.parse(tag.textContent));
  else fetch("api/data").then(function (r) { if (!r.ok) throw new Error("api/data: HTTP " + r.status); return r.json(); }).then(start).catch(function (err) { root.textContent = "could not load the episodes: " + err.message; });
})();
`;

/** The page's styles, shared by the report and the viewer. */
export const PAGE_CSS = `
:root { color-scheme: light; }
body { font: 14px/1.45 system-ui, -apple-system, "Segoe UI", sans-serif; margin: 0; color: #1d1d1f; background: #fafafa; }
main { max-width: 1200px; margin: 0 auto; padding: 16px 24px 64px; }
h1 { font-size: 22px; margin: 8px 0 4px; } h2 { font-size: 18px; margin: 32px 0 8px; border-bottom: 1px solid #ddd; padding-bottom: 4px; } h3 { font-size: 15px; margin: 8px 0; }
.meta { color: #666; font-size: 12px; }
figure.chart { background: #fff; border: 1px solid #e2e2e2; border-radius: 6px; padding: 8px; margin: 12px 0; display: inline-block; vertical-align: top; }
.flip-run { display: inline-block; vertical-align: top; margin-right: 16px; }
.flip-run figure.chart { display: block; }
figure.chart figcaption { font-size: 12px; color: #555; max-width: 680px; margin-top: 4px; }
table { border-collapse: collapse; background: #fff; margin: 8px 0; font-size: 13px; }
th, td { border: 1px solid #e2e2e2; padding: 3px 8px; text-align: right; } th:first-child, td:first-child { text-align: left; }
th { background: #f3f3f3; font-weight: 600; } td.text { text-align: left; }
.note { background: #fff8e1; border: 1px solid #f0d98c; padding: 6px 10px; border-radius: 4px; }
.controls { display: flex; gap: 8px; align-items: center; flex-wrap: wrap; margin: 8px 0; }
.controls input[type=search] { flex: 1; min-width: 240px; padding: 4px 6px; }
.chip { border: 1px solid #999; border-radius: 12px; background: #eef; padding: 2px 8px; cursor: pointer; }
.viewer-layout { display: grid; grid-template-columns: 280px 1fr; gap: 12px; align-items: start; }
.episode-list { list-style: none; margin: 0; padding: 0; max-height: 80vh; overflow: auto; background: #fff; border: 1px solid #e2e2e2; border-radius: 6px; }
.episode-list li { border-bottom: 1px solid #f0f0f0; } .episode-list li.active { background: #e8f0fe; }
.episode-list a { display: block; padding: 3px 8px; color: inherit; text-decoration: none; font-size: 13px; word-break: break-all; }
#episode-detail { background: #fff; border: 1px solid #e2e2e2; border-radius: 6px; padding: 8px 14px; min-height: 200px; }
#episode-detail.empty { color: #777; }
.step { border-top: 1px solid #eee; margin-top: 10px; padding-top: 6px; }
.step-title { font-weight: 600; margin: 6px 0 4px; } .step-title .meta, .step-title .answer { font-weight: 400; margin-left: 8px; }
.reflection { background: #f6f3ff; border-left: 3px solid #8a6fd1; padding: 2px 10px; margin-bottom: 6px; }
.block-title { font-size: 12px; color: #555; margin-top: 4px; }
pre { white-space: pre-wrap; word-break: break-word; background: #f7f7f7; padding: 6px 8px; margin: 2px 0; border-radius: 4px; font: 12.5px/1.4 ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; }
pre.diff ins { background: #c8f2d4; text-decoration: none; } pre.diff del { background: #f9c9c9; }
.badge { display: inline-block; font-size: 11px; padding: 0 6px; border-radius: 8px; color: #fff; font-weight: 600; }
.badge.right { background: #0a8a5f; } .badge.wrong { background: #c0392b; } .badge.unjudged { background: #888; }
details summary { cursor: pointer; font-size: 12px; color: #555; }
button.diff-mode { font-size: 11px; margin-left: 6px; }
`;

/** JSON for a `<script type="application/json">` element: `<` escaped so no text can close the element. */
export function scriptJson(value: unknown): string {
  return JSON.stringify(value).replace(/</g, "\\u003c").replace(/\u2028/g, "\\u2028").replace(/\u2029/g, "\\u2029");
}

/** The standalone page of `reflect view`: the episode browser alone, its data fetched from `api/data`. */
export function viewerPage(title: string): string {
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${title.replace(/[&<>"]/g, (c) => `&#${c.charCodeAt(0)};`)}</title><style>${PAGE_CSS}</style></head>
<body><main><h1>${title.replace(/[&<>"]/g, (c) => `&#${c.charCodeAt(0)};`)}</h1><p class="meta">reflect view — episodes, each attempt, the verifier's feedback, the reflection and the retry; filter and search above the list.</p>
<section id="viewer"></section></main><script>${VIEWER_SCRIPT}</script></body></html>
`;
}
