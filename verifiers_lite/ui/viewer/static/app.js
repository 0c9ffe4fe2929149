/* vf-lite view: runs, rollouts, transcripts and comparisons.
 * Everything a model or a user wrote reaches the page as text nodes (h() below), never as
 * HTML, so a completion holding markup or <script> shows as text. */
"use strict";
(function () {
  const DATA_EL = document.getElementById("vf-data"); // present in a to_html() file
  const DATA = DATA_EL ? JSON.parse(DATA_EL.textContent) : null;
  const TOKEN = new URLSearchParams(location.search).get("token");
  const app = document.getElementById("app");
  const live = document.getElementById("live");
  const PAGE = 50;
  const FINISHED = ["completed", "completed_with_errors", "interrupted"];
  let timer = null;
  let renderSeq = 0;
  // A to_html() file of one run has nothing to compare: no link that leads nowhere.
  const CAN_COMPARE = !DATA || DATA.runs.length > 1;
  if (!CAN_COMPARE) document.querySelectorAll("a[href='#/compare']").forEach(a => a.remove());

  // ---------------------------------------------------------------- helpers
  function h(tag, attrs, ...kids) {
    const el = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) {
      if (v === null || v === undefined || v === false) continue;
      if (k === "class") el.className = v;
      else if (k === "style") Object.assign(el.style, v);
      else if (k.startsWith("on")) el.addEventListener(k.slice(2), v);
      else el.setAttribute(k, v === true ? "" : String(v));
    }
    for (const kid of kids.flat(Infinity)) {
      if (kid === null || kid === undefined || kid === false) continue;
      el.append(kid instanceof Node ? kid : document.createTextNode(String(kid)));
    }
    return el;
  }
  const enc = encodeURIComponent;
  function num(v, d = 3) { return v === null || v === undefined || Number.isNaN(v) ? "—" : Number(v).toFixed(d); }
  // A mean with its error bar, as the library prints it: mean ± stderr (clustered by example)
  // and the 95% interval; with one example or no variance there is no interval, and the page
  // says why (``why``: the server's reason, else read from the standard error).
  function undefinedReason(mean, se, why) {
    if (why) return why;
    if (se === null || se === undefined || Number.isNaN(se)) return "one example";
    return se === 0 ? "no variance, every example's mean is " + num(mean) : null;
  }
  function est(mean, se, ci, d = 3, why = null) {
    if (mean === null || mean === undefined) return "—";
    const reason = undefinedReason(mean, se, why) || (!ci || ci[0] === null ? "one example" : null);
    if (reason) return num(mean, d) + "  (95% CI undefined: " + reason + ")";
    return num(mean, d) + " ± " + num(se, d) + "  [" + num(ci[0], d) + ", " + num(ci[1], d) + "]";
  }
  function signed(v, d = 3) { return v === null || v === undefined ? "—" : (v > 0 ? "+" : "") + num(v, d); }
  // A metric that counts (characters, turns, tool calls) reads 38, not 38.000.
  function fmt(v, d = 3) { return Number.isInteger(v) ? String(v) : num(v, d); }
  function allIntegers(values) { return values.every(v => v === null || v === undefined || Number.isInteger(v)); }
  function when(t) { return t ? new Date(t * 1000).toLocaleString() : "—"; }
  function badge(status) { return h("span", { class: "badge " + status }, status); }
  function pretty(v) { return JSON.stringify(v === undefined ? null : v, null, 2); }
  function kv(pairs) {
    return h("table", { class: "kv" }, pairs.filter(p => p).map(([k, v]) => h("tr", {}, h("th", {}, k), h("td", {}, v))));
  }
  function setLive(fn, ms) {
    if (timer) clearInterval(timer);
    timer = fn ? setInterval(fn, ms) : null;
    live.textContent = fn ? "● following live" : "";
  }
  function mount(seq, ...nodes) {
    if (seq !== renderSeq) return false; // the user navigated away meanwhile
    app.replaceChildren(...nodes);
    return true;
  }

  async function api(path, params) {
    const qs = new URLSearchParams();
    for (const [k, v] of Object.entries(params || {})) {
      if (v === "" || v === null || v === undefined) continue;
      if (Array.isArray(v)) v.forEach(x => qs.append(k, x)); else qs.set(k, v);
    }
    if (DATA) return staticApi(path, qs);
    const url = "api/" + path + (qs.toString() ? "?" + qs.toString() : "");
    const res = await fetch(url, { headers: TOKEN ? { Authorization: "Bearer " + TOKEN } : {} });
    const body = await res.json().catch(() => ({}));
    if (!res.ok) {
      const d = body.detail;
      throw new Error(typeof d === "string" ? d : d ? JSON.stringify(d) : res.status + " " + res.statusText);
    }
    return body;
  }

  // ---------------------------------------------------------------- static (to_html) mode
  function staticApi(path, qs) {
    const parts = path.split("/").map(decodeURIComponent);
    if (parts[0] === "runs" && parts.length === 1) return { runs: DATA.runs };
    const id = parts[1];
    if (parts[0] !== "runs" || !DATA.details[id]) throw new Error("this file holds one run; compare needs `vf-lite view`");
    if (parts.length === 2) return DATA.details[id];
    const rows = DATA.rows[id];
    if (parts.length === 3) {
      let sel = rows.slice();
      const g = k => qs.get(k);
      const f = x => parseFloat(x);
      if (g("error") === "any") sel = sel.filter(r => r.s.error_category);
      else if (g("error") === "none") sel = sel.filter(r => !r.s.error_category);
      else if (g("error")) sel = sel.filter(r => r.s.error_category === g("error"));
      if (g("stop_reason")) sel = sel.filter(r => r.s.stop_reason === g("stop_reason"));
      if (g("example_id") !== null) sel = sel.filter(r => String(r.s.example_id) === g("example_id"));
      const inRange = (v, lo, hi) => v !== null && v !== undefined && (lo === null || v >= f(lo)) && (hi === null || v <= f(hi));
      for (const c of rangeColumns(DATA.details[id].columns))
        if (g("min_" + c.name) !== null || g("max_" + c.name) !== null) sel = sel.filter(r => inRange(r.s[c.name], g("min_" + c.name), g("max_" + c.name)));
      if (g("metric") && (g("min_metric") !== null || g("max_metric") !== null))
        sel = sel.filter(r => inRange((r.s.metrics || {})[g("metric")], g("min_metric"), g("max_metric")));
      if (g("q")) { const q = g("q").toLowerCase(); sel = sel.filter(r => JSON.stringify(r.r).toLowerCase().includes(q)); }
      const sort = g("sort") || "";
      if (sort) {
        const key = sort.replace(/^-/, ""), desc = sort.startsWith("-");
        const val = r => key in r.s && key !== "metrics" ? r.s[key] : (r.s.metrics || {})[key];
        const has = sel.filter(r => val(r) !== null && val(r) !== undefined), miss = sel.filter(r => !has.includes(r));
        has.sort((a, b) => (val(a) < val(b) ? -1 : val(a) > val(b) ? 1 : 0) * (desc ? -1 : 1));
        sel = has.concat(miss);
      }
      const off = parseInt(g("offset") || "0", 10), lim = parseInt(g("limit") || String(PAGE), 10);
      return { total: sel.length, num_rows: rows.length, complete: true, status: DATA.details[id].status,
               offset: off, limit: lim, rows: sel.slice(off, off + lim).map(r => r.s) };
    }
    const match = rows.filter(r => String(r.s.example_id) === parts[3] && String(r.s.rollout_index) === parts[4]);
    if (!match.length) throw new Error("no such rollout");
    return { run_id: id, row: match[match.length - 1].r, token_counts: {},
             rollout_indices: rows.filter(r => String(r.s.example_id) === parts[3]).map(r => r.s.rollout_index) };
  }

  // ---------------------------------------------------------------- routing
  function route() {
    const raw = location.hash.replace(/^#\/?/, "");
    const qi = raw.indexOf("?");
    const path = qi < 0 ? raw : raw.slice(0, qi);
    const query = new URLSearchParams(qi < 0 ? "" : raw.slice(qi + 1));
    return { parts: path.split("/").filter(Boolean).map(decodeURIComponent), query };
  }
  function go(parts, query) {
    const qs = query && query.toString();
    location.hash = "#/" + parts.map(enc).join("/") + (qs ? "?" + qs : "");
  }

  async function render() {
    const seq = ++renderSeq;
    setLive(null);
    const { parts, query } = route();
    try {
      if (parts.length === 0) {
        if (DATA && DATA.runs.length === 1) return go(["runs", DATA.runs[0].run_id]);
        await runsPage(seq);
      } else if (parts[0] === "runs" && parts.length === 2) await runPage(seq, parts[1]);
      else if (parts[0] === "runs" && parts[2] === "rollouts") await rolloutsPage(seq, parts[1], query);
      else if (parts[0] === "runs" && parts[2] === "rows" && parts.length === 5) await transcriptPage(seq, parts[1], parts[3], parts[4]);
      else if (parts[0] === "compare") await comparePage(seq, query);
      else mount(seq, h("p", {}, "No such page. ", h("a", { href: "#/" }, "All runs")));
    } catch (e) {
      mount(seq, h("div", { class: "errbox" }, String(e.message || e)));
    }
  }

  // ---------------------------------------------------------------- Runs
  async function runsPage(seq) {
    const selected = new Set();
    const tbody = h("tbody");
    const compareBtn = h("button", { class: "primary", id: "compare-selected", disabled: true,
      onclick: () => { const q = new URLSearchParams(); selected.forEach(r => q.append("runs", r)); go(["compare"], q); } },
      "Compare selected");
    async function fill() {
      const data = await api("runs");
      tbody.replaceChildren(...data.runs.map(r => h("tr", { "data-run": r.run_id },
        h("td", {}, h("input", { type: "checkbox", checked: selected.has(r.run_id), onchange: e => {
          if (e.target.checked) selected.add(r.run_id); else selected.delete(r.run_id);
          compareBtn.disabled = selected.size < 2;
        } })),
        h("td", {}, h("a", { href: "#/runs/" + enc(r.run_id) }, r.run_id),
          r.rescored ? h("span", { class: "badge rescored", title: "scored again from a saved run's rollouts" }, "re-scored") : ""),
        h("td", {}, r.env_id || "—"), h("td", {}, r.model || "—"), h("td", {}, when(r.start_time)),
        h("td", { class: "num" }, r.num_rollouts, r.planned_rollouts ? " / " + r.planned_rollouts : ""),
        h("td", { class: "num" }, est(r.reward_mean, r.reward_stderr, r.reward_ci, 3, r.reward_ci_undefined)),
        h("td", { class: "num" }, r.num_errors ? h("span", { class: "error-text" }, r.num_errors) : "0"),
        h("td", {}, badge(r.status), r.error ? h("div", { class: "error-text run-error" }, r.error) : ""))));
      return data.runs;
    }
    const runs = await fill();
    mount(seq, h("h2", {}, "Runs"),
      runs.length ? h("table", { id: "runs" }, h("thead", {}, h("tr", {}, ["", "run", "env", "model", "date", "rollouts",
        "mean reward ± stderr [95% CI]", "errors", "status"].map(c => h("th", {}, c)))), tbody)
        : h("p", { class: "muted" }, "No runs found under the given paths."),
      h("p", {}, compareBtn, " ", h("span", { class: "muted" }, "tick two or more runs of one environment")));
    if (!DATA && runs.some(r => r.status === "running")) setLive(() => fill().catch(() => {}), 2000);
  }

  // ---------------------------------------------------------------- Run
  // Rewards on a numeric axis, as the notebook plots draw them: a bar stands at its value (a few
  // distinct values) or spans its bin, so 1.17 sits next to 1.25 and far from 0.00.
  function histogram(bins) {
    if (!bins.length) return h("p", { class: "muted" }, "no scored rollouts yet");
    const max = Math.max(...bins.map(b => b.count));
    const lo = Math.min(...bins.map(b => b.lo)), hi = Math.max(...bins.map(b => b.hi));
    const span = hi - lo || 1;
    const discrete = bins.every(b => b.lo === b.hi);
    const at = v => (discrete && hi === lo ? 50 : 100 * (v - lo) / span);
    const ticks = discrete ? bins.map(b => b.lo) : [lo, lo + span / 4, lo + span / 2, lo + 3 * span / 4, hi];
    return h("div", { class: "hist", id: "reward-hist" },
      h("div", { class: "plot" }, bins.map(b => h("div", {
        class: "col", title: (b.lo === b.hi ? num(b.lo, 2) : num(b.lo, 2) + "–" + num(b.hi, 2)) + ": " + b.count + " rollouts",
        "data-value": b.lo, style: discrete ? { left: at(b.lo) + "%" } : { left: at(b.lo) + "%", width: (100 * (b.hi - b.lo) / span) + "%" } },
        h("span", { class: "cnt" }, b.count),
        h("div", { class: "bar", style: { height: Math.max(2, Math.round(100 * b.count / max)) + "px" } })))),
      h("div", { class: "axis" }, ticks.map(v => h("span", { class: "tick", "data-value": v, style: { left: at(v) + "%" } }, num(v, 2)))));
  }

  // The reward is the weighted sum of these functions' values (each is also a metric). A run's
  // fingerprint holds {funcs: [[name, qualname, weight, code], ...]} or, for a group,
  // {tasks: {task: ...}}; runs saved before code was fingerprinted hold [[name, qualname, weight]].
  function rubricEntries(sig, task) {
    if (Array.isArray(sig)) return sig.flatMap(e => Array.isArray(e[1]) ? rubricEntries(e[1], e[0]) : e[0] === "config" ? [] : [[task, e[0], e[1], e[2]]]);
    if (sig && sig.tasks) return Object.entries(sig.tasks).flatMap(([t, part]) => rubricEntries(part, t));
    return ((sig && sig.funcs) || []).map(f => [task, f[0], f[1], f[2]]);
  }
  function rubricTable(sig) {
    const entries = rubricEntries(sig, null);
    if (!entries.length) return h("p", { class: "muted" }, "not recorded");
    const grouped = entries.some(e => e[0] !== null);
    const rows = entries.map(([task, name, qualname, weight]) => h("tr", {}, grouped ? h("td", {}, task) : null,
      h("td", {}, name, qualname && qualname !== name ? h("span", { class: "muted" }, " (" + qualname + ")") : ""),
      h("td", { class: "num" }, fmt(Number(weight)))));
    return h("table", { id: "rubric" }, h("thead", {}, h("tr", {}, (grouped ? ["task"] : []).concat(["function (metric)", "weight"]).map(c => h("th", {}, c)))),
      h("tbody", {}, rows));
  }

  // What produced the run, session by session (each session's manifest: versions, environment
  // code, model client and endpoint, server builds; a run saved before sessions kept their own
  // has one manifest, its last session's); and the run a re-scored one came from.
  function sessionManifests(m) {
    const found = (m.sessions || []).map((s, i) => [i, s]).filter(([, s]) => s && s.manifest);
    return found.length ? found : m.manifest ? [[null, { manifest: m.manifest }]] : [];
  }
  function manifestRows(man) {
    const env = man.environment || {};
    const code = env.source_sha256 ? "sha256 " + env.source_sha256.slice(0, 16) : env.code_hash ? "code " + env.code_hash : (env.note || "—");
    const endpoints = (man.endpoints || []).map(e => e.endpoint
      ? (e.client ? e.client + " · " : "") + e.endpoint + (e.model ? " · " + (e.model.id || "") + (e.model.owned_by ? " (" + e.model.owned_by + ")" : "") : e.error ? " · " + e.error : e.note ? " · " + e.note : "")
      : (e.client || "client") + " · " + (e.note || "no endpoint"));
    const pkgs = Object.entries(man.packages || {}).map(([k, v]) => k + " " + v).join(", ");
    return [
      ["verifiers_lite", man.library_version || "—"],
      ["python", (man.python || "—").split(" ")[0]], ["platform", man.platform || "—"],
      ["packages", pkgs || "—"],
      ["environment", (env.module || env.class || "—") + " · " + code],
      ["model endpoint", endpoints.length ? h("span", {}, endpoints.map(t => h("div", {}, t))) : "—"],
      ["system fingerprint", (man.system_fingerprints || []).join(", ") || "none returned"],
    ];
  }
  function sessionTitle(i, s) {
    const ran = s.rollouts === undefined ? "" : s.rollouts === 0 ? " · ran no rollouts" : " · " + s.rollouts + " rollouts";
    return h("h4", { class: "session" }, "Session " + (i + 1) + (i === 0 ? "" : " (resume)") + ran + (s.start_time ? " · " + when(s.start_time) : ""));
  }
  function reproBlock(m, sourceRun) {
    const sessions = sessionManifests(m);
    const from = m.rescored_from;
    if (!sessions.length && !from) return "";
    const many = sessions.length > 1;
    const blocks = sessions.map(([i, s]) => h("div", { class: "session-manifest" }, many && i !== null ? sessionTitle(i, s) : "", kv(manifestRows(s.manifest))));
    const was = from && from.reward_mean !== undefined && from.reward_mean !== null ? " (reward was " + num(from.reward_mean) + ")" : "";
    const fromRow = from ? kv([["re-scored from", sourceRun
      ? h("span", {}, h("a", { href: "#/runs/" + enc(sourceRun), id: "rescored-from" }, sourceRun), was,
        h("span", { class: "muted" }, "  " + from.path))
      : h("span", { id: "rescored-from" }, (from.path || "an in-memory run") + was)]]) : "";
    return h("div", { id: "reproducibility" }, h("h3", {}, "Reproducibility"), ...blocks, fromRow);
  }

  async function runPage(seq, id) {
    const d = await api("runs/" + enc(id));
    const s = d.stats, m = d.metadata;
    const rlink = (label, q) => h("a", { href: "#/runs/" + enc(id) + "/rollouts" + (q ? "?" + new URLSearchParams(q) : "") }, label);
    const secs = m.duration_s != null ? m.duration_s : (m.end_time && m.start_time ? m.end_time - m.start_time : null);
    const dur = secs == null ? "—" : secs.toFixed(1) + " s" + (m.resumed ? " (resumed: " + (m.sessions || []).length + " sessions)" : "");
    const mounted = mount(seq,
      h("h2", {}, (m.env_id || id), " · ", (m.model || "?"), " ", badge(d.status),
        m.rescored_from ? h("span", { class: "badge rescored" }, "re-scored") : ""),
      h("p", { class: "links" }, rlink("Rollouts (" + s.num_rollouts + ") →"), s.num_errors ? rlink("errored rollouts (" + s.num_errors + ") →", { error: "any" }) : ""),
      h("div", { class: "grid" },
        h("div", {}, h("h3", {}, "Summary"), kv([
          ["run", d.run_id], ["path", d.path], ["status", h("span", {}, badge(d.status), m.budget && m.budget.stopped ? h("span", { id: "budget-stop", class: "muted" }, " stopped: " + m.budget.stopped) : "")],
          ["started", when(m.start_time)], ["duration", dur],
          ["rollouts", s.num_rollouts + (m.num_rollouts ? " of " + m.num_rollouts + " planned" : "") + (s.complete === false ? " (indexing…)" : "")],
          ["examples × rollouts", s.num_examples + " × " + (m.rollouts_per_example || "?")],
          ["mean reward", h("span", { id: "reward-mean" }, h("b", {}, est(s.reward_mean, s.reward_stderr, s.reward_ci, 3, s.reward_ci_undefined)),
            h("span", { class: "muted" }, " ± stderr clustered by example [95% CI]"),
            s.num_scored !== s.num_rollouts ? " over " + s.num_scored + " scored" : "")],
          ["errors", s.num_errors ? h("span", { class: "error-text" }, s.num_errors) : "0"],
          ["tokens", s.prompt_tokens + " prompt / " + s.completion_tokens + " completion"],
          ["cost", h("span", { id: "run-cost" }, s.cost || "unpriced")],
          ["mean time / rollout", h("span", { id: "mean-timing" }, s.mean_rollout_ms === null || s.mean_rollout_ms === undefined ? "—" : "rollout " + num(s.mean_rollout_ms, 0) + " ms",
            Object.keys(s.timing_ms || {}).length ? h("div", { class: "muted" }, timingParts(s.timing_ms)) : "")],
        ])),
        h("div", {}, h("h3", {}, "Reward histogram"), histogram(s.reward_histogram)),
        h("div", {}, h("h3", {}, "Metrics (mean over scored ± stderr [95% CI])"),
          Object.keys(s.metrics_mean).length ? kv(Object.entries(s.metrics_mean).map(([k, v]) =>
            // a count that never varies (every completion 38 words) reads 38, not 38.000 ± 0.000
            [k, Number.isInteger(v) && !(s.metrics_stderr || {})[k] ? fmt(v) : est(v, (s.metrics_stderr || {})[k], (s.metrics_ci || {})[k], 3, (s.metrics_ci_undefined || {})[k])])) : h("p", { class: "muted" }, "none"),
          h("h3", {}, "pass@k (", s.pass_criterion, ")"),
          Object.keys(s.pass_at_k).length ? kv(Object.entries(s.pass_at_k).map(([k, v]) => ["pass@" + k, num(v)])) : h("p", { class: "muted" }, "—")),
        h("div", {}, h("h3", {}, "Errors by category"),
          Object.keys(s.errors).length ? kv(Object.entries(s.errors).map(([k, v]) => [rlink(k, { error: k }), h("span", { class: "error-text" }, v)]))
            : h("p", { class: "muted" }, "no errors"),
          h("h3", {}, "Stop reasons"), kv(Object.entries(s.stop_reasons).map(([k, v]) => [k === "null" ? "(none)" : rlink(k, { stop_reason: k }), v]))),
        h("div", {}, h("h3", {}, "Rubric"), rubricTable((m.fingerprint || {}).rubric),
          h("h3", {}, "Sampling args"), h("pre", { class: "json" }, pretty(m.sampling_args || {})),
          h("h3", {}, "Environment args"), h("pre", { class: "json" }, pretty(m.env_args || {}))),
        reproBlock(m, d.rescored_from_run)),
      h("h3", {}, "System prompt"), d.system_prompt
        ? h("div", { class: "msg system", id: "system-prompt" }, h("div", { class: "content" }, d.system_prompt))
        : h("p", { class: "muted", id: "system-prompt" }, "none (the first rollout's prompt has no system message)"));
    if (mounted && !DATA && (!FINISHED.includes(d.status) || s.complete === false)) {
      setLive(async () => {
        const nd = await api("runs/" + enc(id)).catch(() => null);
        if (nd && seq === renderSeq && (nd.stats.num_rollouts !== s.num_rollouts || nd.status !== d.status || nd.stats.complete !== s.complete)) render();
      }, 2000);
    }
  }

  // ---------------------------------------------------------------- Rollouts
  // The rows' columns come from the server (the library's one list of columns): which the table
  // shows (those with a label; text and messages last), which sort, which filter by a range.
  function rangeColumns(columns) { return columns.filter(c => c.filter === "range"); }
  function tableColumns(columns) {
    const shown = columns.filter(c => c.label);
    return shown.filter(c => c.kind !== "messages").concat(shown.filter(c => c.kind === "messages"));
  }
  function filterKeys(columns) {
    return ["q", ...rangeColumns(columns).flatMap(c => ["min_" + c.name, "max_" + c.name]), "error", "stop_reason",
      "metric", "min_metric", "max_metric", "example_id"];
  }
  // One table cell of a column, by its name where it is special, else by its kind.
  function cell(c, r, counts, id) {
    const v = r[c.name];
    if (c.name === "example_id") {
      const href = "#/runs/" + enc(id) + "/rows/" + enc(String(r.example_id)) + "/" + enc(String(r.rollout_index));
      return h("td", {}, h("a", { href }, String(v)));
    }
    if (c.name === "error_category") return h("td", {}, v ? h("span", { class: "badge err", title: r.error }, v) : "");
    if (c.kind === "messages") return h("td", { class: "text", title: v }, v);
    if (c.kind === "float") return h("td", { class: "num" }, num(v, c.name.endsWith("_ms") ? 0 : 3));
    if (c.kind === "int") return h("td", { class: "num" }, v ?? "—");
    return h("td", { class: c.name, title: v }, v ?? "");
  }

  async function rolloutsPage(seq, id, query) {
    const d = await api("runs/" + enc(id));
    const s = d.stats;
    const params = { offset: query.get("offset") || 0, limit: PAGE, sort: query.get("sort") || "" };
    filterKeys(d.columns).forEach(k => { if (query.get(k) !== null && query.get(k) !== "") params[k] = query.get(k); });
    const field = (name, label, input) => h("label", {}, label, input);
    const val = k => query.get(k) || "";
    const select = (name, options) => h("select", { name }, options.map(([v, t]) => h("option", { value: v, selected: val(name) === v }, t)));
    const form = h("form", { class: "filters", id: "filters", onsubmit: e => {
      e.preventDefault();
      const q = new URLSearchParams();
      new FormData(form).forEach((v, k) => { if (String(v).trim() !== "") q.set(k, String(v).trim()); });
      if (query.get("sort")) q.set("sort", query.get("sort"));
      go(["runs", id, "rollouts"], q);
    } },
      field("q", "text search", h("input", { name: "q", type: "search", value: val("q"), placeholder: "in messages, tools, errors" })),
      rangeColumns(d.columns).flatMap(c => [["min_", " ≥"], ["max_", " ≤"]].map(([end, sign]) =>
        field(end + c.name, c.name + sign, h("input", { name: end + c.name, type: "number", step: "any", value: val(end + c.name) })))),
      field("error", "error", select("error", [["", "all rollouts"], ["any", "any error"], ["none", "no error"],
        ...s.error_categories.map(c => [c, c])])),
      field("stop_reason", "stop reason", select("stop_reason", [["", "any"], ...s.stop_reason_names.map(c => [c, c])])),
      field("metric", "metric", select("metric", [["", "—"], ...s.metric_names.map(c => [c, c])])),
      field("min_metric", "metric ≥", h("input", { name: "min_metric", type: "number", step: "any", value: val("min_metric") })),
      field("max_metric", "metric ≤", h("input", { name: "max_metric", type: "number", step: "any", value: val("max_metric") })),
      field("example_id", "example id", h("input", { name: "example_id", value: val("example_id"), size: 8 })),
      h("button", { class: "primary", type: "submit" }, "Apply"),
      h("button", { type: "button", onclick: () => go(["runs", id, "rollouts"]) }, "Reset"));
    const metrics = s.metric_names.slice(0, 4);
    // [column, its key, its label]: a metric column is the run's metric of that name
    const cols = tableColumns(d.columns).flatMap(c => c.expand ? metrics.map(mn => [{ name: mn, sort: true, metric: true }, mn, mn])
      : [[c, c.name, c.label]]);
    const sort = params.sort;
    const thead = h("thead", {}, h("tr", {}, cols.map(([c, key, label]) => {
      if (!c.sort) return h("th", { title: c.doc }, label);
      const active = sort.replace(/^-/, "") === key;
      const metric = Boolean(c.metric);
      // a long metric name may wrap, only after an underscore
      if (metric) label = label.split("_").flatMap((part, i) => i ? ["_", h("wbr"), part] : [part]);
      return h("th", { class: "sortable" + (active ? " sorted" : "") + (metric ? " metric" : ""), "data-sort": key,
        title: c.doc || null, onclick: () => {
        const q = new URLSearchParams(query); q.set("sort", active && !sort.startsWith("-") ? "-" + key : key); q.delete("offset");
        go(["runs", id, "rollouts"], q);
      } }, label, active ? (sort.startsWith("-") ? " ▼" : " ▲") : "");
    })));
    const tbody = h("tbody");
    const info = h("span", { id: "rows-info" });
    const prev = h("button", { id: "prev", onclick: () => page(-1) }, "‹ Prev");
    const next = h("button", { id: "next", onclick: () => page(1) }, "Next ›");
    let last = null;
    function page(dir) {
      const q = new URLSearchParams(query);
      q.set("offset", String(Math.max(0, Number(params.offset) + dir * PAGE)));
      go(["runs", id, "rollouts"], q);
    }
    function fillRows(res) {
      last = res;
      const counts = new Set(metrics.filter(mn => allIntegers(res.rows.map(r => (r.metrics || {})[mn]))));
      tbody.replaceChildren(...res.rows.map(r => {
        const href = "#/runs/" + enc(id) + "/rows/" + enc(String(r.example_id)) + "/" + enc(String(r.rollout_index));
        return h("tr", { class: "clickable", onclick: e => { if (e.target.tagName !== "A") location.hash = href; } },
          cols.map(([c, key]) => c.metric ? h("td", { class: "num" }, (counts.has(key) ? fmt : num)((r.metrics || {})[key]))
            : cell(c, r, counts, id)));
      }));
      const off = res.offset;
      info.textContent = res.total ? `rows ${off + 1}–${off + res.rows.length} of ${res.total}${res.complete ? "" : "+ (indexing…)"}` +
        (res.total !== res.num_rows ? ` matching (${res.num_rows} in run)` : "") : "no rollouts match";
      prev.disabled = off === 0;
      next.disabled = off + res.rows.length >= res.total && res.complete;
    }
    const res = await api("runs/" + enc(id) + "/rows", params);
    fillRows(res);
    const mounted = mount(seq, h("h2", {}, h("a", { href: "#/runs/" + enc(id) }, d.metadata.env_id || id), " · rollouts ", badge(d.status)),
      form, h("div", { class: "pager" }, prev, next, info), h("div", { class: "table-wrap" }, h("table", { id: "rows" }, thead, tbody)));
    if (mounted && !DATA && (!FINISHED.includes(res.status) || !res.complete)) {
      setLive(async () => {
        const nr = await api("runs/" + enc(id) + "/rows", params).catch(() => null);
        if (!nr || seq !== renderSeq) return;
        if (nr.num_rows !== last.num_rows || nr.total !== last.total || nr.complete !== last.complete) fillRows(nr);
        if (FINISHED.includes(nr.status) && nr.complete) setLive(null);
      }, 2000);
    }
  }

  // ---------------------------------------------------------------- Transcript
  // An image part's URL when the page may show it (a data: image or an http(s) URL), else null.
  function imageUrl(part) {
    const v = part && part.image_url;
    const url = typeof v === "string" ? v : v && typeof v.url === "string" ? v.url : null;
    return url && /^(data:image\/|https?:\/\/)/i.test(url) ? url : null;
  }
  // A content part as the page shows it: text as text, an image as a thumbnail (never its
  // base64 text), anything else as its type.
  function partNode(p) {
    if (p && p.type === "text") return p.text === "" ? null : h("div", { class: "content" }, String(p.text ?? ""));
    const url = imageUrl(p);
    if (p && p.type === "image_url" && url) {
      const label = url.startsWith("data:") ? "image · " + url.slice(5, url.indexOf(";") > 0 ? url.indexOf(";") : 30) + " · " +
        Math.round(url.length * 3 / 4 / 1024) + " KB" : "image · " + url;
      const img = h("img", { class: "thumb", src: url, alt: label, title: label, referrerpolicy: "no-referrer", loading: "lazy" });
      return h("figure", { class: "image-part" }, url.startsWith("data:") ? img : h("a", { href: url, target: "_blank", rel: "noopener noreferrer" }, img),
        h("figcaption", { class: "muted" }, label.length > 90 ? label.slice(0, 89) + "…" : label));
    }
    return h("div", { class: "content muted" }, "[" + String((p && p.type) || "part") + (p && p.type === "image_url" ? ": not a data: or http(s) URL" : "") + "]");
  }
  function contentNodes(content) {
    if (Array.isArray(content)) return content.map(partNode);
    return content === null || content === undefined || content === "" ? [] : [h("div", { class: "content" }, String(content))];
  }
  // A thinking model's reasoning, collapsed: what it thought before the content.
  function reasoningNode(m) {
    const r = typeof m.reasoning_content === "string" ? m.reasoning_content : typeof m.reasoning === "string" ? m.reasoning : "";
    if (!r) return null;
    return h("details", { class: "reasoning" }, h("summary", {}, "reasoning · " + r.length + " characters"), h("div", { class: "content" }, r));
  }
  function messageList(messages, callNames) {
    if (typeof messages === "string") return [h("div", { class: "msg assistant" }, h("div", { class: "role" }, "text"), h("div", { class: "content" }, messages))];
    return (messages || []).map(m => {
      const role = String(m.role || "?");
      const kids = [h("div", { class: "role" }, role === "tool" ? "tool result" + (callNames[m.tool_call_id] ? " · " + callNames[m.tool_call_id] : "") : role)];
      kids.push(reasoningNode(m), ...contentNodes(m.content));
      for (const c of m.tool_calls || []) {
        const fn = c.function || {};
        callNames[c.id] = fn.name;
        let args = fn.arguments;
        try { args = pretty(typeof args === "string" ? JSON.parse(args) : args); } catch (e) { args = String(args); }
        kids.push(h("div", { class: "tool-call" }, h("span", { class: "name" }, "tool call · " + (fn.name || "?")),
          c.id ? h("span", { class: "muted" }, "  " + c.id) : "", h("div", { class: "content" }, args)));
      }
      return h("div", { class: "msg " + role.replace(/[^a-z_]/gi, "") }, kids);
    });
  }

  // Where a rollout's time went, each part by its name (records.TIMING_PARTS): a request waiting
  // for a slot (max_concurrent, a single-slot server) is not the model's time.
  const TIMING_PARTS = [["queue_ms", "waiting for a request slot"], ["generation_ms", "in the model request"],
    ["env_ms", "in the environment"], ["group_wait_ms", "waiting for its group"], ["scoring_ms", "scoring"]];
  const ms = v => Math.round(v).toLocaleString("en-US") + " ms";
  function timingParts(t) {
    return TIMING_PARTS.filter(([k]) => t[k] !== undefined && t[k] !== null).map(([k, label]) => label + " " + ms(t[k])).join(" · ");
  }
  function timing(t) {
    const head = [["rollout_ms", "rollout"], ["total_ms", "until its group was scored"]].filter(([k]) => t[k] !== undefined && t[k] !== null)
      .map(([k, label]) => label + " " + ms(t[k])).join(" · ");
    const parts = timingParts(t);
    return head || parts ? h("span", { id: "row-timing" }, head, parts ? h("div", { class: "muted" }, parts) : "") : "—";
  }
  // The failure, and where the author's code raised it (their frames; the library's folded).
  function errorBox(err, id) {
    return h("div", { class: "errbox", id }, h("b", {}, err.category || "error"), ": ", h("span", { class: "content" }, err.message || JSON.stringify(err)),
      err.traceback ? h("pre", { class: "traceback" }, err.traceback) : "");
  }

  // ---------------------------------------------------------------- Timeline
  // The row's model calls, each request whole again: a stored step keeps how many messages of the
  // previous request (plus its answer; the prompt for the first call) it starts with and the new
  // ones after them, and leaves its answer to the completion (core/trajectory.py stores them so).
  function modelCalls(r) {
    const replies = (Array.isArray(r.completion) ? r.completion : []).filter(m => m && m.role === "assistant");
    const steps = Array.isArray(r.trajectory) ? r.trajectory
      : (r.finish_reasons || []).slice(0, replies.length).map(f => ({ finish_reason: f }));
    let base = Array.isArray(r.prompt) ? r.prompt : [];
    return steps.map((s, i) => {
      const step = Object.assign({}, s);
      if (!("message" in step) && i < replies.length) step.message = replies[i];
      const q = step.request;
      if (q && Array.isArray(q.messages_new)) {
        const kept = q.messages_kept || 0;
        step.request = Object.assign({}, q, { messages: base.slice(0, kept).concat(q.messages_new) });
        step.kept = kept;
      }
      if (step.request && Array.isArray(step.request.messages)) base = step.request.messages.concat([step.message]);
      return step;
    });
  }
  const pct = (v, total) => Math.max(0, Math.min(100, v / total * 100)) + "%";
  // One timeline line: what it is, a bar at its place on the rollout's time axis, its duration.
  function tlLine(label, segs, total, dur) {
    return [h("span", { class: "tl-label" }, label),
      h("span", { class: "tl-track" }, segs.filter(s => s[1] > 0 || s[2] === "model").map(([start, d, cls, title]) =>
        h("span", { class: "tl-bar " + cls, title, style: { left: pct(start, total), width: pct(d, total) } }))),
      h("span", { class: "tl-dur num" }, ms(dur))];
  }
  function callEnd(c) {
    const t = c.timing || {};
    return Math.max((t.start_ms || 0) + (t.queue_ms || 0) + (t.latency_ms || 0),
      c.env ? c.env.start_ms + c.env.duration_ms : 0, ...(c.tool_calls || []).map(x => (x.start_ms || 0) + (x.duration_ms || 0)));
  }
  function callDetail(c, calls, n) {
    const u = c.usage || {}, t = c.timing || {}, q = c.request || {};
    const sent = q.messages || [];
    const kept = c.kept === undefined ? 0 : c.kept;
    return h("div", { class: "tl-detail" },
      kv([["model", c.model || "—"], ["finish reason", c.finish_reason || "—"],
        ["tokens", (u.prompt_tokens ?? "?") + " prompt / " + (u.completion_tokens ?? "?") + " completion" + (u.reasoning_tokens ? " (" + u.reasoning_tokens + " reasoning)" : "")],
        ["time", "started at " + ms(t.start_ms || 0) + " · waited for a slot " + ms(t.queue_ms || 0) + " · latency " + ms(t.latency_ms || 0)],
        ["sampling args", h("pre", { class: "json sampling-args" }, pretty(q.sampling_args || {}))]]),
      h("div", { class: "divider" }, "request · " + sent.length + " messages"),
      kept ? h("details", { class: "tl-kept" }, h("summary", { class: "muted" }, kept + " earlier messages, unchanged since the previous call"),
        h("div", { class: "msgs" }, messageList(sent.slice(0, kept), {}))) : "",
      h("div", { class: "msgs request-new" }, messageList(sent.slice(kept), {})),
      h("div", { class: "divider" }, "response"),
      h("div", { class: "msgs response" }, messageList(c.message ? [c.message] : [], {})));
  }
  function toolDetail(x) {
    let args = x.arguments;
    try { args = pretty(typeof args === "string" ? JSON.parse(args) : args); } catch (e) { args = String(args); }
    return h("div", { class: "tl-detail" }, kv([["call id", x.id || "—"], ["arguments", h("pre", { class: "json tool-args" }, args)],
      ["result", h("div", { class: "content tool-result" }, String(x.result ?? ""))], x.error ? ["error", h("span", { class: "error-text" }, x.error)] : null,
      x.traceback ? ["traceback", h("pre", { class: "traceback" }, x.traceback)] : null,
      ["time", "started at " + ms(x.start_ms || 0) + " · took " + ms(x.duration_ms || 0)]]));
  }
  function timeline(r) {
    const calls = modelCalls(r);
    if (!calls.some(c => c.timing)) return null;
    const total = Math.max(1, (r.timing || {}).rollout_ms || 0, ...calls.map(callEnd));
    const lines = [];
    calls.forEach((c, i) => {
      const t = c.timing || {}, u = c.usage || {}, s = t.start_ms || 0, qd = t.queue_ms || 0, lat = t.latency_ms || 0;
      const label = "model call " + (i + 1) + " · " + (c.finish_reason || "?") + " · " + (u.prompt_tokens ?? "?") + " → " + (u.completion_tokens ?? "?") + " tokens";
      lines.push(h("details", { class: "tl-row tl-call" }, h("summary", {}, tlLine(label,
        [[s, qd, "queue", "waiting for a request slot " + ms(qd)], [s + qd, lat, "model", "model latency " + ms(lat)]], total, qd + lat)), callDetail(c, calls, i)));
      for (const x of c.tool_calls || [])
        lines.push(h("details", { class: "tl-row tl-tool" }, h("summary", {}, tlLine("tool · " + (x.name || "?") + (x.error ? " · " + x.error : ""),
          [[x.start_ms || 0, x.duration_ms || 0, "tool" + (x.error ? " failed" : ""), "tool " + ms(x.duration_ms || 0)]], total, x.duration_ms || 0)), toolDetail(x)));
      if (c.env) lines.push(h("div", { class: "tl-row tl-env" }, tlLine("environment",
        [[c.env.start_ms, c.env.duration_ms, "env", "the environment's turn " + ms(c.env.duration_ms)]], total, c.env.duration_ms)));
    });
    const ticks = [0, 0.25, 0.5, 0.75, 1].map(f => h("span", { class: "tl-tick", style: { left: f * 100 + "%" } }, ms(total * f)));
    return h("div", { id: "timeline", class: "timeline" }, h("div", { class: "divider" }, "timeline · " + calls.length + " model calls · " + ms(total)),
      h("div", { class: "tl-row tl-axis" }, h("span", { class: "tl-label muted" }, "time since the rollout started"), h("span", { class: "tl-track" }, ticks), h("span", {})),
      lines);
  }

  // ---------------------------------------------------------------- Branches
  // A program's calls (env_state.program_calls), each request whole again: a stored call keeps
  // how many messages (and prompt token ids) of the last call of its branch (a branch's first
  // call: the call before it) it starts with and the new ones after them (core/trajectory.py,
  // compact_calls). Whole calls come back as they are.
  function programCalls(r) {
    const stored = r.env_state && r.env_state.program_calls;
    if (!Array.isArray(stored)) return null;
    const last = new Map();
    let previous = [];
    return stored.map(s => {
      const step = Object.assign({}, s), q = step.request;
      const base = last.has(step.branch) ? last.get(step.branch) : previous;
      if (q && Array.isArray(q.messages_new))
        step.request = Object.assign({}, q, { messages: base.slice(0, q.messages_kept || 0).concat(q.messages_new) });
      if (step.request && Array.isArray(step.request.messages)) last.set(step.branch, previous = step.request.messages.concat([step.message]));
      return step;
    });
  }
  // One section per branch of a program's calls: the conversation as its last call sent it, and
  // the answer to it (the program ended on the branch of its last call).
  function branches(r) {
    const calls = programCalls(r);
    if (!calls || !calls.length) return null;
    const order = [], byBranch = new Map();
    for (const c of calls) {
      if (!byBranch.has(c.branch)) { byBranch.set(c.branch, []); order.push(c.branch); }
      byBranch.get(c.branch).push(c);
    }
    const ended = calls[calls.length - 1].branch;
    return h("div", { id: "branches" }, h("div", { class: "divider" }, "the program's conversations · " + order.length + (order.length === 1 ? " branch" : " branches")),
      order.map(b => {
        const own = byBranch.get(b), lastCall = own[own.length - 1];
        const sent = (lastCall.request || {}).messages || [];
        return h("section", { class: "branch", id: "branch-" + b, "data-branch": String(b) },
          h("div", { class: "divider" }, "branch " + b + " · " + own.length + (own.length === 1 ? " call" : " calls") + " (calls " + own.map(c => (c.call ?? 0) + 1).join(", ") + ")" + (b === ended ? " · the program ended on it" : "")),
          h("div", { class: "msgs" }, messageList(sent.concat(lastCall.message ? [lastCall.message] : []), {})));
      }));
  }

  function transcript(d) {
    const r = d.row, err = r.error, u = r.usage || {};
    const calls = {};
    const facts = [
      ["reward", h("span", {}, h("b", { class: "reward" }, num(r.reward)), h("span", { class: "muted gap" }, "answer "), h("span", { class: "content answer" }, String(r.answer ?? "")))],
      r.advantage !== null && r.advantage !== undefined ? ["advantage", num(r.advantage)] : null,
      // each reward function's value, and why it scored so when it said (vf.Score)
      ...Object.entries(r.metrics || {}).map(([k, v]) => ["metric · " + k, (r.explanations || {})[k] === undefined ? fmt(v)
        : h("span", {}, fmt(v), h("span", { class: "explanation muted gap" }, (r.explanations || {})[k]))]),
      ["stop reason", r.stop_reason || "—"], ["turns", r.turns ?? "—"],
      ["tokens", (u.prompt_tokens ?? "?") + " prompt / " + (u.completion_tokens ?? "?") + " completion" + (u.reasoning_tokens ? " (" + u.reasoning_tokens + " reasoning)" : "")],
      ["time", timing(r.timing || {})],
      err ? ["error", errorBox(err, "row-error")] : null,
      ["task", r.task || "—"],
      // what the environment kept on the rollout's State under keys of its own (tries, hints, ...)
      !r.env_state || !Object.keys(r.env_state).length ? null : ["environment state",
        h("table", { id: "env-state", class: "kv" }, Object.entries(r.env_state).map(([k, v]) =>
          h("tr", {}, h("th", {}, k), h("td", {}, typeof v === "object" && v !== null ? h("pre", { class: "json" }, pretty(v)) : String(v)))))],
      !d.token_counts || !Object.keys(d.token_counts).length ? null : ["token ids", Object.entries(d.token_counts).map(([k, v]) => k + ": " + v).join(", ")],
      !r.info || !Object.keys(r.info).length ? null : ["info", h("pre", { class: "json" }, pretty(r.info))],
    ];
    return [kv(facts), timeline(r), h("div", { id: "conversation", class: "msgs" }, h("div", { class: "divider" }, "prompt"), messageList(r.prompt, calls),
      h("div", { class: "divider" }, "completion"), messageList(r.completion, calls)), branches(r)];
  }

  // One rollout in a comparison: a line of figures, then the completion across the column.
  function compareRollout(d) {
    const r = d.row, u = r.usage || {}, t = r.timing || {};
    const chip = (label, value, cls) => h("span", { class: "chip" + (cls ? " " + cls : "") }, label ? h("span", { class: "muted" }, label + " ") : "", value);
    const metrics = Object.entries(r.metrics || {}).map(([k, v]) => chip(k, fmt(v)));
    return h("div", { class: "compare-rollout" },
      h("div", { class: "facts" }, chip("", "rollout " + r.rollout_index, "idx"), chip("reward", h("b", {}, num(r.reward)), "reward"),
        metrics, chip("stop", r.stop_reason || "—"), chip("turns", r.turns ?? "—"), chip("tokens", u.completion_tokens ?? "—"),
        t.rollout_ms !== undefined && t.rollout_ms !== null ? chip("", num(t.rollout_ms, 0) + " ms") : ""),
      r.error ? errorBox(r.error) : "",
      h("div", { class: "msgs" }, messageList(r.completion, {})));
  }

  async function transcriptPage(seq, id, eid, idx) {
    const d = await api("runs/" + enc(id) + "/rows/" + enc(eid) + "/" + enc(idx));
    const sib = d.rollout_indices || [];
    const at = sib.indexOf(Number(idx));
    const link = (i, label) => h("a", { href: "#/runs/" + enc(id) + "/rows/" + enc(eid) + "/" + i }, label);
    mount(seq, h("h2", {}, h("a", { href: "#/runs/" + enc(id) + "/rollouts" }, id), " · example ", eid, " · rollout ", idx),
      h("p", { class: "links", id: "rollout-links" }, at > 0 ? link(sib[at - 1], "‹ previous rollout") : "", at >= 0 && at < sib.length - 1 ? link(sib[at + 1], "next rollout ›") : "",
        h("a", { href: "#/runs/" + enc(id) + "/rollouts?" + new URLSearchParams({ example_id: eid }) }, "all rollouts of this example")),
      h("div", { id: "transcript" }, transcript(d)));
  }

  // ---------------------------------------------------------------- Compare
  // Each run against the first, paired over the examples both scored (vf.compare_runs' figures).
  function pairedTable(paired) {
    // An undefined figure (no variance, one shared example) is named so, never shown as a number.
    const undef = p => p.undefined ? h("span", { class: "undefined" }, "undefined: " + p.undefined) : null;
    const rows = [["difference", p => undef(p) ? h("b", {}, signed(p.diff), "  ", undef(p)) : h("b", {}, signed(p.diff), " ± ", num(p.stderr), "  [", signed(p.ci[0]), ", ", signed(p.ci[1]), "]")],
      ["p-value (paired t-test)", p => undef(p) || num(p.p_value) + " (" + p.df + " df)"],
      ["b better / tied / worse", p => p.wins + " / " + p.ties + " / " + p.losses],
      ["shared examples", p => String(p.shared)],
      ["only in a / only in b / unscored", p => p.only_a.length + " / " + p.only_b.length + " / " + p.unscored.length],
      ["detectable at 80% power", p => undef(p) || num(p.mde)]];
    return h("div", {}, h("h3", {}, "Paired difference b − a over shared examples (mean ± stderr [95% CI])"),
      h("table", { id: "compare-paired", class: "kv" },
        h("tr", {}, h("th", {}, ""), paired.map(p => h("th", { class: "num" }, p.labels[1] + " − " + p.labels[0]))),
        rows.map(([name, f]) => h("tr", {}, h("th", {}, name), paired.map(p => h("td", { class: "num" }, f(p)))))));
  }

  async function comparePage(seq, query) {
    const ids = query.getAll("runs");
    if (!CAN_COMPARE) {
      mount(seq, h("p", {}, "This file holds one run: nothing to compare. ", h("a", { href: "#/" }, "Back to the run")));
      return;
    }
    if (ids.length < 2) {
      const data = await api("runs");
      const selected = new Set();
      const btn = h("button", { class: "primary", id: "compare-go", disabled: true, onclick: () => {
        const q = new URLSearchParams(); selected.forEach(r => q.append("runs", r)); go(["compare"], q); } }, "Compare");
      mount(seq, h("h2", {}, "Compare runs"), h("p", { class: "muted" }, "Pick two or more runs of one environment."),
        h("table", { id: "compare-picker" }, h("thead", {}, h("tr", {}, ["", "run", "env", "model", "date", "rollouts", "mean reward ± stderr"].map(c => h("th", {}, c)))),
          h("tbody", {}, data.runs.map(r => h("tr", {}, h("td", {}, h("input", { type: "checkbox", onchange: e => {
            if (e.target.checked) selected.add(r.run_id); else selected.delete(r.run_id); btn.disabled = selected.size < 2; } })),
            h("td", {}, r.run_id), h("td", {}, r.env_id || "—"), h("td", {}, r.model || "—"), h("td", {}, when(r.start_time)),
            h("td", { class: "num" }, r.num_rollouts), h("td", { class: "num" }, est(r.reward_mean, r.reward_stderr, r.reward_ci, 3, r.reward_ci_undefined)))))),
        h("p", {}, btn));
      return;
    }
    const c = await api("compare", { runs: ids });
    const example = query.get("example");
    const head = h("tr", {}, h("th", {}, "example"), c.runs.map(r => h("th", { class: "num" }, r.label)), h("th", { class: "num" }, "Δ (" + c.diff + ")"));
    const rows = c.examples.map(e => {
      const q = new URLSearchParams(query); q.set("example", e.example_id);
      return h("tr", { class: "clickable" + (e.example_id === example ? " sorted" : ""), onclick: () => go(["compare"], q) },
        h("td", {}, h("a", { href: "#/compare?" + q }, e.example_id)),
        e.means.map((m, i) => h("td", { class: "num" }, num(m), h("span", { class: "muted" }, " (" + e.counts[i] + ")"))),
        h("td", { class: "num " + (e.diff > 0 ? "diff-pos" : e.diff < 0 ? "diff-neg" : "") }, e.diff === null ? "—" : (e.diff > 0 ? "+" : "") + num(e.diff)));
    });
    const nodes = [h("h2", {}, "Compare · ", c.runs[0].env_id || ""),
      h("table", { id: "compare-runs" }, h("tr", {}, h("th", {}, "run"), h("th", {}, "label"), h("th", {}, "model"), h("th", { class: "num" }, "mean reward ± stderr [95% CI]"), h("th", { class: "num" }, "errors"), h("th", { class: "num" }, "cost")),
        c.runs.map(r => h("tr", {}, h("td", {}, h("a", { href: "#/runs/" + enc(r.run_id) }, r.run_id)), h("td", {}, r.label), h("td", {}, r.model || "—"),
          h("td", { class: "num" }, est(r.reward_mean, r.reward_stderr, r.reward_ci, 3, r.reward_ci_undefined)), h("td", { class: "num" }, r.num_errors),
          h("td", { class: "num compare-cost" }, r.cost || "unpriced")))),
      c.paired_error ? h("div", { class: "errbox", id: "compare-paired-error" }, c.paired_error) : pairedTable(c.paired),
      h("h3", {}, "Per-example mean reward, largest difference first (", c.num_examples, " examples)"),
      h("div", { class: "grid" }, h("table", { id: "compare-examples" }, head, rows))];
    if (example !== null) {
      const columns = await Promise.all(c.runs.map(async r => {
        const list = await api("runs/" + enc(r.run_id) + "/rows", { example_id: example, limit: 20 });
        const details = await Promise.all(list.rows.map(x => api("runs/" + enc(r.run_id) + "/rows/" + enc(String(x.example_id)) + "/" + x.rollout_index)));
        return { details, col: h("div", { class: "compare-col" }, h("h3", {}, r.label, h("span", { class: "muted" }, "  " + r.run_id)),
          details.length ? details.map(compareRollout) : h("p", { class: "muted" }, "no rollouts of this example")) };
      }));
      // The example's prompt and answer are the same in every run: shown once, across the page.
      const first = columns.map(x => x.details[0]).find(Boolean);
      nodes.push(h("h3", { id: "compare-example" }, "Example ", example, " across runs"),
        first ? h("div", { class: "compare-prompt" }, h("div", { class: "msgs" }, messageList(first.row.prompt, {})),
          h("p", {}, h("span", { class: "muted" }, "answer "), h("b", { class: "content", id: "compare-answer" }, String(first.row.answer ?? "")))) : "",
        h("div", { class: "cols" }, columns.map(x => x.col)));
    }
    mount(seq, ...nodes);
  }

  window.addEventListener("hashchange", render);
  render();
})();
