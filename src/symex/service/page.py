"""The service's web page (``GET /``): one self-contained HTML document, no build step.

It asks for the tenant's token (kept in the browser's localStorage), submits jobs, lists them
with live progress, and shows a job's coverage over time (an inline SVG plot), its solver
share, its crashes with their stacks and a download of each reproducing input, and its
coverage (the HTML report, and the lcov text). Everything it shows comes from the JSON API, with the token in the
``Authorization`` header.
"""

from __future__ import annotations

import json

from symex.core.memory.models import DEFAULT_MEMORY_MODEL, MEMORY_MODEL_NAMES
from symex.service.job_status import JobStatus

__all__ = ["PAGE"]

#: the statuses of a job that is over, as the page's script tests them
_FINAL_STATUSES = json.dumps([status.value for status in JobStatus if status.final])
#: symex's memory models, offered by the page's memory model field (a plug-in's name may be typed)
_MEMORY_MODELS = "".join(f'<option value="{name}">' for name in MEMORY_MODEL_NAMES)

PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>symex</title>
<style>
body{font-family:system-ui,sans-serif;margin:1.5em;max-width:70em;color:#222}
h1{font-size:1.4em} table{border-collapse:collapse;width:100%}
td,th{border-bottom:1px solid #ddd;padding:.3em .5em;text-align:left}
tr.job{cursor:pointer} tr.job:hover{background:#f4f4f4} tr.selected{background:#e8f0fe}
.crash{border-left:4px solid #c33;padding:.3em .8em;margin:.6em 0;background:#fff7f7}
pre{background:#f6f6f6;padding:.5em;overflow:auto;max-height:20em}
.status-done{color:#070} .status-failed{color:#b00} .status-running{color:#06c}
form>*{margin:.2em .6em .2em 0} form>label{display:inline-block;white-space:nowrap}
#error,#message.bad{color:#b00} #message.good{color:#070}
#hint{color:#555;font-style:italic}
</style></head><body>
<h1>symex: symbolic execution as a service</h1>
<p><label>Token <input id="token" type="password" size="50"></label>
<button id="save-token">Use token</button></p>
<p id="hint"></p>
<form id="submit"><input type="file" id="program" name="program" accept=".c,.ll,.bc">
<label>goal <input name="goal" value="all-paths" size="16" list="goals"></label>
<datalist id="goals"><option value="all-paths"><option value="crashes"><option value="first-crash">
<option value="line-coverage:90"><option value="branch-coverage:90"></datalist>
<label>max time <input name="max_time" value="60" size="4"> s</label>
<label>inputs <input name="inputs" placeholder="--sym-stdin 8" size="14"></label>
<label>arguments <input name="arguments" placeholder="-p 11211" size="14"></label>
<label>seeds <input type="file" id="seeds" name="seeds" accept=".ktest" multiple></label>
<label>max sym array <input name="max_sym_array_size" value="0" size="6"> bytes</label>
<label>entry <input name="entry" value="main" size="10"></label>
<label>memory model <input name="memory_model" value="__DEFAULT_MEMORY_MODEL__" size="10" list="memory-models"></label>
<datalist id="memory-models">__MEMORY_MODELS__</datalist>
<button type="submit">Submit</button></form>
<p id="message" role="status"></p>
<p id="error"></p>
<table><thead><tr><th>job</th><th>program</th><th>memory model</th><th>status</th><th>paths</th><th>error paths</th>
<th>line coverage</th><th>reason</th></tr></thead><tbody id="jobs"></tbody></table>
<div id="detail" hidden><h2 id="detail-title"></h2>
<p id="solver-share"></p><svg id="plot" width="600" height="160"></svg>
<h3>Crashes</h3><div id="crashes"></div>
<h3>Coverage</h3><iframe id="coverage-page" title="coverage" style="width:100%;height:24em;border:1px solid #ddd"></iframe>
<details><summary>lcov</summary><pre id="coverage"></pre></details></div>
<script>
let token = localStorage.getItem("symex-token") || "";
let selected = null;
const $ = (id) => document.getElementById(id);
$("token").value = token;
// what the user's last action gave (kept until the next one: the refresh leaves it alone)
function say(text, good) { $("message").textContent = text;
  $("message").className = text ? (good ? "good" : "bad") : ""; }
$("save-token").onclick = () => { say(""); token = $("token").value.trim();
  localStorage.setItem("symex-token", token); refresh(); };
async function api(path, options = {}) {
  options.headers = Object.assign({Authorization: "Bearer " + token}, options.headers || {});
  const response = await fetch(path, options);
  if (!response.ok) {
    let detail = response.statusText;
    try { detail = (await response.json()).detail; } catch (e) {}
    if (Array.isArray(detail))  // FastAPI's validation errors: say which fields
      detail = detail.map((d) => (d.loc || []).slice(-1)[0] + ": " + d.msg).join("; ");
    throw new Error(response.status + ": " + (typeof detail === "string" ? detail : JSON.stringify(detail)));
  }
  return response;
}
$("submit").onsubmit = async (event) => {
  event.preventDefault();
  say("");
  if (!token) { say("paste your API token above and press Use token first"); return; }
  if (!$("program").files.length) {
    say("choose a program to submit first: a .c, .ll or .bc file"); return; }
  const form = new FormData($("submit"));
  try { const job = await (await api("/api/jobs", {method: "POST", body: form})).json();
        say("job " + job.id + " submitted", true); selected = job.id; refresh(); }
  catch (e) { say("not submitted: " + e.message); }
};
function text(value) { return value === null || value === undefined ? "" : String(value); }
function percent(part, whole) { return whole ? (100 * part / whole).toFixed(1) + "%" : ""; }
async function refresh() {
  $("hint").textContent = token ? "" : "Paste your API token (symex tenant add NAME " +
    "prints one) and press Use token to see your jobs and submit programs.";
  if (!token) return;
  let jobs;
  try { jobs = await (await api("/api/jobs")).json(); $("error").textContent = ""; }
  catch (e) { $("error").textContent = e.message; return; }
  const body = $("jobs"); body.textContent = "";
  for (const job of jobs) {
    const row = body.insertRow(); row.className = "job" + (job.id === selected ? " selected" : "");
    row.id = "job-" + job.id;
    // a finished job's summary, a running one's latest progress row
    const s = job.summary || {}; const p = job.progress;
    const paths = p ? p.completed + p.errors + p.partial : s.paths;
    const errors = p ? p.errors : s.errors;
    const coverage = p ? percent(p.covered_lines, p.total_lines) : s.line_coverage;
    for (const cell of [job.id, job.program, job.memory_model, job.status, paths, errors, coverage, job.reason]) {
      row.insertCell().textContent = text(cell);
    }
    row.cells[3].className = "status-" + job.status;
    row.onclick = () => { selected = job.id; refresh(); };
  }
  if (selected !== null) await detail(jobs.find((j) => j.id === selected));
}
async function detail(job) {
  if (!job) { $("detail").hidden = true; return; }
  $("detail").hidden = false;
  $("detail-title").textContent = "Job " + job.id + ": " + job.program + " (" + job.status + ")";
  const rows = await (await api("/api/jobs/" + job.id + "/progress")).json();
  plot(rows);
  const last = rows[rows.length - 1];
  $("solver-share").textContent = last ? "paths " + (last.completed + last.errors + last.partial) +
    ", solver share " + Math.round(100 * last.solver_time / Math.max(last.elapsed, 1e-9)) + " %" : "";
  const crashes = await (await api("/api/jobs/" + job.id + "/crashes")).json();
  const over = __FINAL_STATUSES__.includes(job.status);
  const list = $("crashes"); list.textContent = crashes.length ? "" : over ? "none" : "none (yet)";
  for (const crash of crashes) {
    const box = document.createElement("div"); box.className = "crash";
    const title = document.createElement("b");
    title.textContent = "[" + crash.kind + "] " + crash.message + " at " + crash.location +
      (crash.replayed === true ? " (reproduced natively)" : crash.replayed === false ? " (not reproduced natively)" :
       crash.not_replayed ? " (" + crash.not_replayed + ")" : "");
    const stack = document.createElement("pre"); stack.textContent = crash.stack.join("\\n");
    const input = document.createElement("pre"); input.className = "input";
    // as symex run shows them: numbers, text, or hex
    input.textContent = Object.entries(crash.shown || crash.input).map(([k, v]) => k + " = " + v).join("\\n");
    const link = document.createElement("button"); link.textContent = "download " + crash.test;
    link.className = "download";
    link.onclick = async () => {
      const blob = await (await api("/api/jobs/" + job.id + "/tests/" + crash.test)).blob();
      const a = document.createElement("a"); a.href = URL.createObjectURL(blob);
      a.download = crash.test; a.click(); };
    box.append(title, stack, input, link); list.append(box);
  }
  try { $("coverage").textContent = await (await api("/api/jobs/" + job.id + "/coverage.info")).text(); }
  catch (e) { $("coverage").textContent = "(when the job ends)"; }
  if (job.status === "done" && $("coverage-page").dataset.job !== String(job.id)) {
    try { $("coverage-page").srcdoc = await (await api("/api/jobs/" + job.id + "/coverage.html")).text();
          $("coverage-page").dataset.job = String(job.id); } catch (e) {}
  }
}
function plot(rows) {
  const svg = $("plot"); const w = 600, h = 160;
  if (!rows.length) { svg.innerHTML = ""; return; }
  const tmax = Math.max(rows[rows.length - 1].elapsed, 1e-9);
  // the time axis ends at the last row's time: in ms under a second ("0.0 s" said nothing)
  const points = rows.map((r) => [r.elapsed / tmax * (w - 40) + 30,
    h - 20 - (r.total_lines ? r.covered_lines / r.total_lines : 0) * (h - 30)]);
  const marks = points.map((p) => '<circle class="point" cx="' + p[0] + '" cy="' + p[1] +
    '" r="2" fill="#06c"/>').join("");
  // every run starts with nothing covered: from there, a job of one row (under a second)
  // shows its rise, not a flat line
  points.unshift([30, h - 20]);
  svg.innerHTML = '<line x1="30" y1="' + (h - 20) + '" x2="' + w + '" y2="' + (h - 20) + '" stroke="#999"/>' +
    '<line x1="30" y1="10" x2="30" y2="' + (h - 20) + '" stroke="#999"/>' +
    '<text x="0" y="14" font-size="10">100%</text><text id="plot-end" x="' + (w - 60) + '" y="' + (h - 5) +
    '" font-size="10">' + (tmax < 1 ? Math.round(tmax * 1000) + ' ms' : tmax.toFixed(1) + ' s') +
    '</text><polyline id="coverage-line" fill="none" stroke="#06c" stroke-width="2" points="' +
    points.map((p) => p.join(",")).join(" ") + '"/>' + marks;
}
setInterval(refresh, 1000); refresh();
</script></body></html>
""".replace("__FINAL_STATUSES__", _FINAL_STATUSES).replace(
    "__DEFAULT_MEMORY_MODEL__", DEFAULT_MEMORY_MODEL).replace("__MEMORY_MODELS__", _MEMORY_MODELS)
