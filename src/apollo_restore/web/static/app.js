// apollo-restore web page: paste Leiden text (or open EpiDoc), restore, pick readings, export.
// No build step, no external resources: talks only to this server's /api/*.
"use strict";

const state = {
  text: "",          // the text of the last restoration
  source: null,      // an opened EpiDoc file: {xml, leiden}; exported as itself while its Leiden is the text
  // every map below is keyed by the gap's number, counted from 1, as the page shows it and the API takes it
  hints: {},         // gap number -> null | n | [lo, hi] (overrides the text's hint)
  pins: {},          // gap number -> reading picked by the user
  pinProbs: {},      // gap number -> probability of the picked reading
  pinCands: {},      // gap number -> the picked candidate (its edition form and the alternatives)
  focusGap: null,    // the gap whose reading was just picked, released or re-run: focus goes back to it
  revision: null,    // the last revision (a pick, release or length at one gap): {number, redone}; its card offers the rest
  cache: {},         // gap number -> candidates of the last run in which the gap was not pinned
  result: null,      // last /api/restore response
  health: null,      // /api/health response
  parallels: {},     // gap number -> /api/parallels response | error message
  example: "",       // the text the page opened with (the help describes it while it stays)
  provenanceText: null,  // the text whose provenance the panel shows (cleared when another is restored)
  busy: false,
  restoring: null,   // the AbortController of the restoration running (Stop aborts it), else null
};

const $ = (id) => document.getElementById(id);

function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === undefined || value === null || value === false) continue;
    if (key === "class") node.className = value;
    else if (key === "text") node.textContent = value;
    else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else node.setAttribute(key, value === true ? "" : value);
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

// ---- talking to the server -------------------------------------------------------------

class ApiError extends Error {
  constructor(status, error) {
    super(error && error.message ? error.message : `HTTP ${status}`);
    this.status = status;
    this.error = error || {};
  }
}

async function api(path, body, isForm = false, signal = undefined) {
  const init = { method: body === undefined ? "GET" : "POST", signal };
  if (body !== undefined) {
    init.body = isForm ? body : JSON.stringify(body);
    if (!isForm) init.headers = { "Content-Type": "application/json" };
  }
  let response;
  try {
    response = await fetch(path, init);
  } catch (err) {
    if (signal && signal.aborted) throw err;  // stopped: not the server's failure
    throw new ApiError(0, { message: "the server cannot be reached" });
  }
  let data = null;
  try { data = await response.json(); } catch (err) { data = null; }
  if (!response.ok) throw new ApiError(response.status, data && data.error);
  return data;
}

function showError(err) {
  const box = $("error");
  box.hidden = false;
  box.replaceChildren();
  const e = err.error || {};
  let where = "";
  if (e.line) where = `Line ${e.line}, column ${e.column}: `;
  box.append(el("strong", { text: "Cannot restore. " }), where + (err.message || "unexpected error"));
  if (e.code) box.append(el("span", { class: "help inline", text: `(${e.code})` }));
  if (typeof e.position === "number") {
    const area = $("leiden");
    area.focus();
    area.setSelectionRange(e.position, Math.min(e.position + 1, area.value.length));
  }
}

function clearError() { $("error").hidden = true; $("error").replaceChildren(); }

// Results of an earlier text must not stay on screen (or be exported) once a request fails,
// nor once a text without gaps is opened.
function clearResults() {
  state.result = null;
  for (const id of ["text-panel", "gaps-panel", "export-panel", "export-result", "warnings"]) $(id).hidden = true;
  for (const id of ["restored", "gaps", "warnings"]) { const box = $(id); if (box) box.replaceChildren(); }
  $("export-output").value = "";
  clearProvenance();
}

// a provenance result describes one text: it goes when another text is restored or opened
function clearProvenance() {
  state.provenanceText = null;
  $("provenance-result").replaceChildren();
}

function showWarnings(warnings) {
  const box = $("warnings");
  box.replaceChildren(...(warnings || []).map((w) => el("p", { text: w })));
  box.hidden = !(warnings && warnings.length);
}

function setBusy(busy, message, stoppable = false) {
  state.busy = busy;
  for (const id of ["restore", "export-leiden", "export-epidoc"]) $(id).disabled = busy;
  document.querySelectorAll(".candidate, .hint button, .unpin, .rest").forEach((b) => { b.disabled = busy; });
  $("stop").hidden = !(busy && stoppable);
  $("status").textContent = message || "";
  document.body.setAttribute("aria-busy", busy ? "true" : "false");
}

// ---- restoring ---------------------------------------------------------------------------

// A text is restored one gap per request, left to right, each shown as it arrives: the server reads
// the whole text each time, the gaps before it holding their first reading (fills) or the user's
// (pins), so every gap is read as in one restoration of the whole text, and a text of any number of
// gaps is restored (the server's max_gaps limits the gaps of one request). Stop aborts the request
// running and keeps what has arrived. `from`: the first gap to restore again (a pick, a release or
// a new length there); the gaps before it keep their results, which do not depend on later gaps.
async function restore(from = 1) {
  const text = $("leiden").value;
  if (!text.trim()) { showError(new ApiError(422, { message: "paste a Leiden text first" })); return; }
  if (state.restoring) return;
  state.revision = null;
  if (text !== state.text) {  // a new text: its gaps are not the old ones
    state.hints = {}; state.pins = {}; state.pinProbs = {}; state.pinCands = {}; state.cache = {}; state.parallels = {};
    from = 1;
  }
  const kept = from > 1 && state.result ? state.result.gaps.filter((g) => g.number < from) : [];
  if (kept.length !== from - 1) from = 1;
  state.text = text;
  if (state.provenanceText !== null && state.provenanceText !== text) clearProvenance();
  clearError();
  const controller = new AbortController();
  state.restoring = controller;
  setBusy(true, "Restoring…", true);
  const started = performance.now();
  const k = Number($("k").value);
  let result = null;
  let total = null;
  let n = from;
  try {
    while (total === null || n <= total) {
      $("status").textContent = total === null ? `Restoring gap ${n}…` : `Restoring gap ${n} of ${total}…`;
      const before = result ? result.gaps : kept.slice(0, n - 1);
      const fills = {};
      for (const g of before) if (g.pinned === null) fills[g.number] = g.candidates.length ? g.candidates[0].text : "";
      const body = { text, hints: state.hints, pins: state.pins, k, only: [n], fills };
      const part = await api("/api/restore", body, false, controller.signal);
      if (controller.signal.aborted) break;
      const last = Math.max(n, ...part.gaps.map((g) => g.number));
      total = part.gaps_in_text ?? last;  // the gaps of the whole text
      for (const gap of part.gaps) if (gap.pinned === null) state.cache[gap.number] = gap.candidates;
      if (!result) {
        if (part.text !== text) {  // EpiDoc or Beta Code pasted: the gaps' spans are in the Leiden it was read as
          state.text = part.text; $("leiden").value = part.text;
        }
        result = { ...part, gaps: [...kept, ...part.gaps] };
        if (from > 1 && state.result) result.warnings = state.result.warnings;
        state.result = result;
        render();
        showWarnings(result.warnings);
        keepFocusWhileRunning();
      } else {
        result.gaps.push(...part.gaps);
        renderArrived(part.gaps);
      }
      n = last + 1;
    }
  } catch (err) {
    state.restoring = null;
    if (controller.signal.aborted) { stopped(result, n, total); return; }
    state.focusGap = null;
    if (!result) {
      clearResults();
      setBusy(false, "");
    } else {  // what has arrived stays
      setBusy(false, `Stopped at gap ${n} of ${total}: ${result.gaps.length} gap${result.gaps.length === 1 ? "" : "s"} restored.`);
    }
    showError(err);
    return;
  }
  state.restoring = null;
  if (controller.signal.aborted) { stopped(result, n, total); return; }
  const run = result.gaps.filter((g) => g.number >= from);
  setBusy(false, runSummary(run, (performance.now() - started) / 1000));  // a pick is revised (revise), not restored here
  restoreFocus();
  loadParallels(result);
}

// Stop pressed: the readings that arrived stay (and can be picked and exported), the rest as written
function stopped(result, n, total) {
  state.focusGap = null;
  const done = result ? result.gaps.length : 0;
  const of = total === null ? "" : ` of ${total}`;
  setBusy(false, `Stopped: ${done}${of} gap${done === 1 && !of ? "" : "s"} restored; the others are left as written.`);
  $("restore").focus();
  if (result) loadParallels(result);
}

function stopRestoring() {
  if (state.restoring) state.restoring.abort();
}

// what a gap holds while later gaps are restored: its pick, else its first reading ("" where it has none)
function holds(gap) {
  if (gap.pinned !== null) return gap.pinned;
  return gap.candidates.length ? gap.candidates[0].text : "";
}

// A pick, a release or a new length at gap `number` restores again only what it changes: that gap,
// then, in order, each later gap whose context holds a gap that changed (`gap.reads`: the earlier gaps
// standing within the model's context of it, as the server found them), a gap whose first reading
// changes changing in turn the gaps that read it. Every other gap keeps its readings (what a
// restoration of the whole text would give them but where a gap's context held a change beyond the
// model's window); its card then offers to restore all the later gaps again (restoreRest).
async function revise(number) {
  const text = $("leiden").value;
  const result = state.result;
  if (state.restoring) return;
  if (!result || text !== state.text || !result.gaps.some((g) => g.number === number)) { restore(); return; }
  clearError();
  state.revision = null;
  const controller = new AbortController();
  state.restoring = controller;
  setBusy(true, `Restoring gap ${number} again…`, true);
  const started = performance.now();
  const k = Number($("k").value);
  const changed = new Set([number]);
  const redone = [];
  const queue = result.gaps.map((g) => g.number).filter((n) => n >= number).sort((a, b) => a - b);
  try {
    for (const q of queue) {
      const old = result.gaps.find((g) => g.number === q);
      const reads = Array.isArray(old.reads) ? old.reads.filter((r) => changed.has(r)) : null;  // null: not known, restored
      if (q !== number && reads && !reads.length) continue;
      $("status").textContent = q === number || !reads ? `Restoring gap ${q} again…`
        : `Restoring gap ${q} again: its context holds gap ${reads.join(", ")}…`;
      const fills = {};
      for (const g of result.gaps) if (g.number < q && g.pinned === null) fills[g.number] = holds(g);
      const body = { text, hints: state.hints, pins: state.pins, k, only: [q], fills };
      const part = await api("/api/restore", body, false, controller.signal);
      if (controller.signal.aborted) break;
      const fresh = part.gaps[0];
      if (fresh.pinned === null) state.cache[q] = fresh.candidates;
      const at = result.gaps.findIndex((g) => g.number === q);
      if (q !== number && holds(result.gaps[at]) !== holds(fresh)) changed.add(q);
      result.gaps[at] = fresh;
      redone.push(fresh);
      renderRevised(fresh);
    }
  } catch (err) {
    state.restoring = null;
    if (!controller.signal.aborted) {
      state.focusGap = null;
      revised(number, redone, `Stopped at an error: ${redone.length} gap${redone.length === 1 ? "" : "s"} restored again; the others keep their readings.`);
      showError(err);
      return;
    }
  }
  state.restoring = null;
  if (controller.signal.aborted) {
    state.focusGap = null;
    revised(number, redone, `Stopped: ${redone.length} gap${redone.length === 1 ? "" : "s"} restored again; the others keep their readings.`);
    $("restore").focus();
    return;
  }
  const secs = (performance.now() - started) / 1000;
  revised(number, redone, pickSummary(result) + revisionSummary(redone, result.gaps.length, secs));
  restoreFocus();
}

// a revision ended: its card offers the rest, the status says what was done, parallels follow
function revised(number, redone, message) {
  state.revision = { number, redone: redone.map((g) => g.number) };
  const gap = state.result.gaps.find((g) => g.number === number);
  const card = $(`gap-${number}`);
  if (gap && card) card.replaceWith(renderGap(gap));
  setBusy(false, message);
  loadParallels(state.result, state.revision.redone);
}

// a gap restored again in a revision: its card and the text show its new readings; focus stays
// where it is, or goes to Stop when it was on the card replaced
function renderRevised(gap) {
  const focusedMark = document.activeElement && document.activeElement.closest ? document.activeElement.closest(".gap-mark") : null;
  renderText();
  if (focusedMark) { const again = $(focusedMark.id); if (again) again.focus({ preventScroll: true }); }
  const card = $(`gap-${gap.number}`);
  if (card) card.replaceWith(renderGap(gap));
  renderProbHelp();
  keepFocusWhileRunning();
}

// what a revision did, in words (`redone`: the gaps it asked again, `arrived`: the gaps shown)
function revisionSummary(redone, arrived, secs) {
  const searched = redone.filter((g) => g.pinned === null).map((g) => g.number);
  const kept = arrived - redone.length;
  const s = (n) => (n === 1 ? "" : "s");
  const keep = kept ? ` The other ${kept} gap${s(kept)} keep${kept === 1 ? "s its reading" : " their readings"}.` : "";
  if (!searched.length) return arrived === 1 ? "Nothing to restore: the gap holds your reading." : `No other gap's context holds it.${keep}`;
  const list = searched.length === 1 ? `Gap ${searched[0]}` : `Gaps ${searched.slice(0, -1).join(", ")} and ${searched[searched.length - 1]}`;
  return `${list} restored again in ${secs.toFixed(1)} s.${keep}`;
}

// "Re-restore all gaps after gap N": the gaps after the revised one, restored as one restoration would
function restoreRest(number) {
  if (state.busy) return;
  state.focusGap = number;
  restore(number + 1);
}

// while the gaps arrive, keyboard focus is never lost: on a control the run disabled, it goes to Stop
function keepFocusWhileRunning() {
  const active = document.activeElement;
  if (!active || active === document.body || active.disabled || !document.contains(active)) $("stop").focus();
}

// a gap that arrived during a run: its card is appended, the text shows its reading; focus stays where it is
function renderArrived(gaps) {
  const focusedMark = document.activeElement && document.activeElement.closest ? document.activeElement.closest(".gap-mark") : null;
  renderText();
  if (focusedMark) { const again = $(focusedMark.id); if (again) again.focus({ preventScroll: true }); }
  $("gaps").append(...gaps.map(renderGap));
  $("gaps-panel").hidden = false;
  renderProbHelp();
}

// after a run, keyboard focus goes back where the user was: the reading just picked (or the gap
// just released or re-run); else it stays where it is (the text, after Ctrl+Enter) unless the run
// took it away (Restore is disabled while it runs), and then goes to the restored text's heading;
// never to <body>
function restoreFocus() {
  const number = state.focusGap;
  state.focusGap = null;
  const card = number ? $(`gap-${number}`) : null;
  const active = document.activeElement;
  const kept = active && active !== document.body && !active.disabled && document.contains(active) && !active.closest("[hidden]");
  if (!card && kept) return;
  const target = card
    ? card.querySelector('.candidate[aria-pressed="true"]') || card.querySelector(".candidate") || card.querySelector("button")
    : $("text-heading");
  if (!target) return;
  if (!card) target.setAttribute("tabindex", "-1");
  target.focus({ preventScroll: !!card });
}

// the pick or release just made, in words, for the status line a screen reader announces
function pickSummary(result) {
  const gap = state.focusGap ? result.gaps.find((g) => g.number === state.focusGap) : null;
  if (!gap) return "";
  return gap.pinned !== null ? `Gap ${gap.number}: your reading ${currentReading(gap)}. ` : `Gap ${gap.number}: released. `;
}

// what the last run did, in words (`gaps`: those it restored): gaps searched and the time it took;
// picked gaps were not searched
function runSummary(gaps, secs) {
  const n = gaps.length;
  if (!n) return "No gaps found: mark lost letters as [.4], [- - -] or ???.";
  const searched = gaps.filter((g) => g.pinned === null).length;
  const picked = n - searched;
  const s = (k) => (k === 1 ? "" : "s");
  const pickedNote = picked ? `; ${picked} gap${s(picked)} hold${picked === 1 ? "s" : ""} your reading` : "";
  if (!searched) return n === 1 ? "Nothing to restore: the gap holds your reading." : `Nothing to restore: all ${n} gaps hold your readings.`;
  return `${searched} gap${s(searched)} restored in ${secs.toFixed(1)} s${pickedNote}.`;
}

// the same request as `apollo-restore parallels --json` makes for each gap: the text, its number, hints and pins
async function loadParallels(result, numbers = null) {
  if (!state.health || !state.health.parallels) return;
  const body = { text: state.text, hints: state.hints, pins: state.pins, k: 5 };
  for (const gap of result.gaps) {
    if (numbers && !numbers.includes(gap.number)) continue;
    try {
      state.parallels[gap.number] = await api("/api/parallels", { ...body, gap: gap.number });
    } catch (err) {
      state.parallels[gap.number] = err.message;
    }
    if (state.result === result) renderParallels(gap.number);
  }
}

function pin(number, candidate) {
  if (state.busy) return;
  state.focusGap = number;
  if (state.pins[number] === candidate.text) {
    delete state.pins[number]; delete state.pinProbs[number]; delete state.pinCands[number];
  } else {
    state.pins[number] = candidate.text; state.pinProbs[number] = candidate.prob; state.pinCands[number] = candidate;
  }
  revise(number);
}

function unpin(number) {
  if (state.busy) return;
  state.focusGap = number;
  delete state.pins[number]; delete state.pinProbs[number]; delete state.pinCands[number];
  revise(number);
}

function applyHint(number, mode, a, b) {
  if (mode === "text") delete state.hints[number];
  else if (mode === "none") state.hints[number] = null;
  else if (mode === "exact") state.hints[number] = Math.max(1, Number(a) || 1);
  else {
    const lo = Math.max(1, Number(a) || 1), hi = Math.max(lo, Number(b) || lo);
    state.hints[number] = [lo, hi];
  }
  delete state.pins[number]; delete state.pinProbs[number]; delete state.pinCands[number];  // a new length: new candidates
  state.focusGap = number;
  revise(number);
}

// ---- rendering ---------------------------------------------------------------------------

function describeHint(hint) {
  if (hint === null || hint === undefined) return "unknown length";
  if (Array.isArray(hint)) return `${hint[0]}–${hint[1]} letters`;
  return `${hint} letter${hint === 1 ? "" : "s"}`;
}

// the line-length estimate of a gap of unknown length (GapResult.length_estimate), as the CLI says it;
// never shown beside a first reading it contradicts without saying so; lost lines say they are not restored
function describeEstimate(gap) {
  if (gap.lost_lines) return gap.label;
  const estimate = gap.length_estimate;
  if (!estimate) return "";
  const count = estimate.lo === estimate.hi ? `${estimate.lo}` : `${estimate.lo}–${estimate.hi}`;
  if (estimate.agrees === false && gap.candidates.length) {
    const first = gap.candidates[0].text.replace(/[^\u03b1-\u03c9]/g, "").length;
    return `line lengths suggest ≈ ${count} letters, not the first reading's ${first}: set the length to search those`;
  }
  return `≈ ${count} letters, from line lengths`;
}

function lineOf(text, offset) { return text.slice(0, offset).split(/\r\n|\r|\n/).length; }

function originalMarker(gap) {
  return gap.span ? state.text.slice(gap.span[0], gap.span[1]) : "";
}

// the reading as an edition writes it (accents, breathings, iota subscript), else its letters
function shown(c) { return c.display || c.text; }

function currentReading(gap) {
  if (gap.pinned !== null) {
    const picked = state.pinCands[gap.number];
    return picked && picked.text === gap.pinned ? shown(picked) : gap.pinned;
  }
  return gap.candidates.length ? shown(gap.candidates[0]) : "";
}

// a picked gap has no candidates in the answer: its last list (state.cache) still says how they were scored
function isCalibrated() {
  const lists = [...state.result.gaps.map((g) => g.candidates), ...Object.values(state.cache)];
  return lists.some((cands) => cands.some((c) => c.calibrated));
}

// as apollo_restore.schema.restoration.percent writes it (the CLI and the export too)
function percent(p) { return p >= 0.995 ? ">99 %" : p < 0.005 ? "<1 %" : `${Math.round(p * 100)} %`; }

function render() {
  renderText();
  renderGaps();
  $("text-panel").hidden = false;
  $("gaps-panel").hidden = !state.result.gaps.length;
  $("export-panel").hidden = false;
}

// The text as restored_leiden writes it: a picked reading and the model's as ⁅reading⁆ (never the editor's [ ])
// only where the server filled it (gap.filled: calibrated ≥ fill_threshold, known words, a gap of
// given extent); any other gap stays as written.
function renderText() {
  const box = $("restored");
  box.replaceChildren();
  const text = state.text;
  let at = 0;
  const gaps = state.result.gaps.filter((g) => g.span).sort((a, b) => a.span[0] - b.span[0]);
  for (const gap of gaps) {
    box.append(text.slice(at, gap.span[0]));
    const pinned = gap.pinned !== null;
    const reading = pinned || gap.filled ? currentReading(gap) : "";
    const kind = pinned ? "your reading" : reading ? "the model's reading" : "left open: no reading likely enough";
    // named by what it shows ("Gap" is there for a screen reader only), so that the name holds the
    // visible text (WCAG 2.5.3); what the reading is, and where the button goes, is its description
    box.append(el("button", {
      type: "button",
      class: "gap-mark" + (pinned ? " pinned" : reading ? " machine" : " open"),
      id: `mark-${gap.number}`,
      title: `${originalMarker(gap)}: ${kind}. Go to the gap's candidates`,
      onclick: () => focusGap(gap.number),
    }, el("span", { class: "visually-hidden", text: "Gap " }), el("sup", { text: String(gap.number) }),
    ...(reading
      ? [el("span", { class: "reading", text: `⁅${reading}⁆` }),
        el("span", { class: "visually-hidden", text: pinned ? " (your pick, a machine reading)" : " (machine reading)" })]
      : [el("span", { class: "empty", text: originalMarker(gap) })])));
    at = gap.span[1];
  }
  box.append(text.slice(at));
}

function focusGap(number) {
  const card = $(`gap-${number}`);
  card.scrollIntoView({ behavior: "smooth", block: "center" });
  const first = card.querySelector(".candidate") || card.querySelector("button");
  if (first) first.focus({ preventScroll: true });
}

function renderGaps() {
  const list = $("gaps");
  list.replaceChildren(...state.result.gaps.map(renderGap));
  renderProbHelp();
}

function renderProbHelp() {
  $("prob-help").textContent = isCalibrated()
    ? "A percentage is calibrated: of the readings this model showed at 30 % on held-out texts, about 30 % were the "
      + "edition's reading. A gap's percentages add up to the chance that its list holds the right reading at all; "
      + "low numbers mean the model does not know."
    : "Percentages are the model's scores normalised over the listed readings; this model folder has no calibration, "
      + "so they do not say how often a reading is right.";
}

function renderGap(gap) {
  const i = gap.number;
  const pinned = gap.pinned !== null;
  const candidates = pinned ? (state.cache[i] || []) : gap.candidates;
  const where = gap.span ? `line ${lineOf(state.text, gap.span[0])}` : "";
  const heading = el("h3", { id: `gap-${i}-title` },
    el("span", { class: "num", text: String(i) }), `Gap ${i}`,
    originalMarker(gap) ? el("code", { text: originalMarker(gap) }) : null,
    el("span", { class: "where", text: [where, describeHint(gap.hint), describeEstimate(gap)].filter(Boolean).join(" · ") }),
    el("span", { class: "badge " + (pinned ? "pinned" : gap.filled ? "proposed" : "open"),
      text: pinned ? "picked" : gap.filled ? "proposed" : "open" }));
  const card = el("li", { class: "gap-card" + (pinned ? " pinned" : ""), id: `gap-${i}`, "aria-labelledby": `gap-${i}-title` }, heading);
  if (pinned) {
    card.append(el("p", { class: "pin-line" }, "Your reading: ", el("span", { class: "reading", lang: "grc", text: currentReading(gap) }), " ",
      el("button", { type: "button", class: "unpin", onclick: () => unpin(i), text: "Release" })));
  }
  card.append(hintControls(gap));
  const total = state.result.gaps_in_text ?? state.result.gaps.length;
  if (state.revision && state.revision.number === i && total > i) {
    const again = state.revision.redone.filter((n) => n > i);
    card.append(el("p", { class: "rest-line" },
      el("button", { type: "button", class: "rest", onclick: () => restoreRest(i), text: `Re-restore all gaps after gap ${i}` }), " ",
      el("span", { class: "help", text: again.length
        ? `Restored again: ${again.length === 1 ? "gap" : "gaps"} ${again.join(", ")}, whose context holds a change; the others kept their readings.`
        : "No later gap's context holds it: the others kept their readings." })));
  }
  const items = candidates.map((c, rank) => {
    const chosen = pinned && c.text === gap.pinned;
    const pct = percent(c.prob);
    const unknown = c.unknown_words && c.unknown_words.length;
    const notes = c.notes || []; // why the reading may be doubtful (Candidate.notes), as the CLI's note column
    return el("li", {}, el("button", {
      type: "button", class: "candidate" + (unknown ? " unknown" : ""), "aria-pressed": chosen ? "true" : "false",
      // no aria-label: the accessible name is what the button shows (rank, the reading and the model's
      // letters in Greek, the percentage, the notes), so that it matches the visible label; aria-pressed says "picked"
      title: (chosen ? "Picked: select again to release" : "Pick this reading") + ` · model letters: ${c.text}`,
      onclick: () => pin(i, c),
    },
    el("span", { class: "rank", text: String(rank + 1) }),
    el("span", { class: "words" },
      el("span", { class: "reading", lang: "grc", text: shown(c) }), " ",
      el("span", { class: "normalised", lang: "grc", text: c.text }),
      notes.map((note) => el("span", { class: "flag", text: note, title: "Why this reading may be doubtful" }))),
    el("span", { class: "bar", "aria-hidden": "true" }, el("span", { style: `width:${Math.max(1, c.prob * 100).toFixed(1)}%` })),
    el("span", { class: "prob", text: pct })));
  });
  card.append(items.length
    ? el("ol", { class: "candidates", "aria-label": `Candidates for gap ${i}` }, items)
    : el("p", { class: "help", text: pinned ? "" : "No candidate within this length." }));
  card.append(el("details", { class: "context" }, el("summary", { text: "Context the model saw" }),
    el("p", { lang: "grc" }, "…" + gap.prefix.slice(-80), el("mark", { text: "[ ]" }), gap.suffix.slice(0, 80) + "…")));
  card.append(el("div", { class: "parallels", id: `parallels-${i}` }));
  card.querySelectorAll(".candidate, .hint button, .unpin, .rest").forEach((b) => { b.disabled = state.busy; });  // a run is on
  setTimeout(() => renderParallels(i), 0);
  return card;
}

function hintControls(gap) {
  const i = gap.number;
  const override = Object.prototype.hasOwnProperty.call(state.hints, i) ? state.hints[i] : undefined;
  const mode = override === undefined ? "text" : override === null ? "none" : Array.isArray(override) ? "range" : "exact";
  const fromText = originalMarker(gap);
  const select = el("select", { id: `hint-mode-${i}`, "aria-label": `Length of gap ${i}` },
    el("option", { value: "text", text: `as in the text${fromText ? ` (${fromText})` : ""}` }),
    el("option", { value: "exact", text: "exactly" }),
    el("option", { value: "range", text: "between" }),
    el("option", { value: "none", text: "unknown" }));
  select.value = mode;
  const base = Array.isArray(gap.hint) ? gap.hint : gap.hint ? [gap.hint, gap.hint] : [5, 8];
  const lo = el("input", { type: "number", min: "1", max: "50", id: `hint-lo-${i}`, "aria-label": `Letters (at least) in gap ${i}`, value: String(base[0]) });
  const hi = el("input", { type: "number", min: "1", max: "50", id: `hint-hi-${i}`, "aria-label": `Letters at most in gap ${i}`, value: String(base[1]) });
  const dash = el("span", { text: "–" });
  const unit = el("span", { text: "letters" });
  const sync = () => {
    const m = select.value;
    lo.hidden = unit.hidden = !(m === "exact" || m === "range");
    hi.hidden = dash.hidden = m !== "range";
  };
  select.addEventListener("change", sync);
  sync();
  const apply = el("button", { type: "button", text: "Re-run", onclick: () => applyHint(i, select.value, lo.value, hi.value) });
  for (const input of [lo, hi]) input.addEventListener("keydown", (e) => { if (e.key === "Enter") apply.click(); });
  return el("fieldset", { class: "hint" }, el("legend", { text: "Length" }), select, lo, dash, hi, unit, apply);
}

function renderParallels(number) {
  const box = $(`parallels-${number}`);
  if (!box) return;
  box.replaceChildren(el("h4", { text: "Parallel passages" }));
  if (!state.health || !state.health.parallels) {
    box.append(el("p", { class: "none", text: "No index loaded on this server." }));
    return;
  }
  const found = state.parallels[number];
  if (found === undefined) { box.append(el("p", { class: "none", text: "Searching…" })); return; }
  if (typeof found === "string") { box.append(el("p", { class: "none", text: `Unavailable: ${found}` })); return; }
  if (!found.groups.length) {
    box.append(el("p", { class: "none", text: found.anchor ? "No parallel passage found." : "No parallel passage: the context is too short." }));
    return;
  }
  if (!found.left !== !found.right) {
    box.append(el("p", { class: "none", text: `Found next to the ${found.left ? "left" : "right"} context only.` }));
  }
  box.append(el("ul", {}, found.groups.map((g) => {
    const cites = g.docs.map((d, j) => docLink((g.labels && g.labels[j]) || d, g.urls[j]));
    const more = g.n_docs > g.docs.length ? `, +${g.n_docs - g.docs.length}` : "";
    return el("li", {}, el("span", { class: "reading", lang: "grc", text: g.display || g.between }), ` ×${g.count} `,
      el("span", { class: "docs" }, "(", ...cites.flatMap((c, j) => (j ? [", ", c] : [c])), `${more})`));
  })));
}

function docLink(doc, url) {
  return url ? el("a", { href: url, target: "_blank", rel: "noopener", text: doc }) : el("span", { text: doc });
}

// ---- provenance ------------------------------------------------------------------------------

async function checkProvenance() {
  const box = $("provenance-result");
  if (!state.health || !state.health.parallels) {
    box.replaceChildren(el("p", { class: "none", text: "No text index loaded on this server." }));
    return;
  }
  box.replaceChildren(el("p", { class: "none", text: "Searching the training data…" }));
  const text = $("leiden").value;
  state.provenanceText = text;
  try {
    const found = await api("/api/provenance", { text });
    box.replaceChildren(el("p", { text: found.summary }));
    if (!found.documents.length) return;
    box.append(
      el("ul", {}, found.documents.map((d) => el("li", {}, docLink(d.label || d.doc, d.url),
        ` (${d.source}): longest run ${d.longest} letters, ${d.covered} letters shared — `,
        el("span", { class: "reading", lang: "grc", text: d.snippet })))));
  } catch (err) {
    box.replaceChildren(el("p", { class: "none", text: `Unavailable: ${err.message}` }));
  }
}

// ---- date and place -------------------------------------------------------------------------

function yearLabel(y) { return y < 0 ? `${-y} BC` : y > 0 ? `AD ${y}` : "1 BC"; }  // no year 0

// The date distribution as an SVG bar chart (drawn here: no external assets), the 80 % interval shaded,
// the median a line. It is drawn at the width it is shown (redrawn when that changes), so that its labels
// keep their size on a phone; it shows the 80 % interval with a margin each side, the whole range one
// click away, and downloads as a standalone SVG file. The figure's text alternative is the summary
// sentence it is labelled by. The markup holds only numbers the page computed and escaped words, and
// the HTML parser puts inline <svg> in the SVG namespace.

//: the chart's geometry in CSS pixels: height, plot top and axis, the side margins (half the widest
//: tick label fits in them), the labels' font size, and the least distance between two ticks
const CHART = { height: 132, top: 8, axis: 96, side: 36, font: 12, tickGap: 72, fileWidth: 640 };
const TICK_STEPS = [1, 2, 5, 10, 20, 25, 50, 100, 200, 400, 800];  // the whole range: from 800 BC
const CHART_STYLE = {
  interval: 'fill="#dbe7f3"', mark: 'fill="#9a6700"', bar: 'fill="#2a5d8f"', point: 'stroke="#111" stroke-width="1.5"',
  axis: 'stroke="#333" stroke-width="1"', tick: `font-size="${CHART.font}" fill="#111" font-family="sans-serif"`,
};

function escapeXml(text) {
  return String(text).replace(/[<>&"']/g, (c) => ({ "<": "&lt;", ">": "&gt;", "&": "&amp;", '"': "&quot;", "'": "&apos;" })[c]);
}

// the years shown: the 80 % interval and a quarter of its width each side (at least 15 years), within
// the distribution's range; or the whole range
function chartView(date, full) {
  const first = date.bins[0], last = date.bins[date.bins.length - 1];
  if (full) return [first, last];
  const margin = Math.max(15, (date.high + 1 - date.low) / 4);
  return [Math.max(first, Math.floor(date.low - margin)), Math.min(last, Math.ceil(date.high + 1 + margin))];
}

// tick years between lo and hi, a round step apart and at least CHART.tickGap pixels; year 0 is AD 1
function chartTicks(lo, hi, plotWidth) {
  const step = TICK_STEPS.find((s) => (s / (hi - lo)) * plotWidth >= CHART.tickGap) || 1600;
  const out = [];
  for (let t = Math.ceil(lo / step) * step; t <= hi; t += step) {
    const year = t === 0 ? 1 : t;
    if (year >= lo && year <= hi) out.push(year);
  }
  return out;
}

// the chart's SVG markup, `width` pixels wide, of the years `view`; `file`: a standalone document
// (namespace, XML declaration, a title and description) rather than the page's inline figure
function chartMarkup(date, view, width, file = null) {
  const { height, top, axis, side } = CHART;
  const [lo, hi] = view;
  const right = width - side;
  const x = (year) => side + ((Math.min(hi, Math.max(lo, year)) - lo) / (hi - lo)) * (right - side);
  const f = (v) => v.toFixed(1);
  const max = Math.max(...date.probs, 1e-9);
  const parts = [`<rect class="interval" ${CHART_STYLE.interval} x="${f(x(date.low))}" y="${top}" height="${axis - top}" ` +
    `width="${f(Math.max(2, x(date.high + 1) - x(date.low)))}"></rect>`];
  date.probs.forEach((p, i) => {
    const a = date.bins[i], b = date.bins[i + 1];
    if (b <= lo || a >= hi) return;
    const h = (p / max) * (axis - top);
    const w = Math.max(0.5, x(b) - x(a) - 0.5);
    parts.push(`<rect class="bar" ${CHART_STYLE.bar} x="${f(x(a))}" y="${f(axis - h)}" width="${f(w)}" height="${f(h)}"></rect>`);
  });
  // the interval marked below the axis too, where no bar hides it
  parts.push(`<rect class="interval-mark" ${CHART_STYLE.mark} x="${f(x(date.low))}" y="${axis + 1}" height="4" ` +
    `width="${f(Math.max(2, x(date.high + 1) - x(date.low)))}"></rect>`);
  parts.push(`<line class="point" ${CHART_STYLE.point} x1="${f(x(date.year))}" x2="${f(x(date.year))}" y1="${top}" y2="${axis}"></line>`);
  parts.push(`<line class="axis" ${CHART_STYLE.axis} x1="${side}" x2="${right}" y1="${axis}" y2="${axis}"></line>`);
  for (const tick of chartTicks(lo, hi, right - side)) {
    parts.push(`<line class="axis" ${CHART_STYLE.axis} x1="${f(x(tick))}" x2="${f(x(tick))}" y1="${axis}" y2="${axis + 5}"></line>`);
    parts.push(`<text class="tick" ${CHART_STYLE.tick} x="${f(x(tick))}" y="${axis + 21}" text-anchor="middle">${yearLabel(tick)}</text>`);
  }
  const size = `width="${width}" height="${height}" viewBox="0 0 ${width} ${height}"`;
  if (!file) return `<svg class="date-chart" ${size} role="img" aria-labelledby="attribute-summary">${parts.join("")}</svg>`;
  return `<?xml version="1.0" encoding="UTF-8"?>\n<svg xmlns="http://www.w3.org/2000/svg" ${size}>` +
    `<title>${escapeXml(file.title)}</title><desc>${escapeXml(file.desc)}</desc>` +
    `<rect width="${width}" height="${height}" fill="#fff"></rect>${parts.join("")}</svg>\n`;
}

// the figure of the date: the chart at the figure's width, the button between the zoomed view and the
// whole range, the caption saying which is shown, and the download of what is shown
function dateFigure(date, summary) {
  const view = { full: false, width: 0 };
  const [first, last] = chartView(date, true);
  const holder = el("div", { class: "date-chart-box" });
  const toggle = el("button", { type: "button", class: "date-zoom" });
  const shown = el("span");
  const download = el("a", { class: "date-download button", download: "date-distribution.svg", href: "#" });
  const caption = el("figcaption", { class: "help" }, "Probability of each 25-year span; shaded, and marked ",
    "below the axis: the 80 % interval; line: the median. ", shown);
  const figure = el("figure", { class: "date-figure" }, holder, caption,
    el("p", { class: "date-actions" }, toggle, " ", download));
  const draw = () => {
    view.width = Math.max(200, Math.floor(holder.clientWidth || 640));
    const years = chartView(date, view.full);
    holder.innerHTML = chartMarkup(date, years, view.width);
    shown.textContent = `Shown: ${yearLabel(years[0])} to ${yearLabel(years[1])}` +
      (view.full ? ", the whole range." : ", the 80 % interval and its margins.");
    toggle.textContent = view.full ? "Zoom to the 80 % interval" : `Show the whole range (${yearLabel(first)} to ${yearLabel(last)})`;
    const file = chartMarkup(date, years, CHART.fileWidth, { title: summary,
      desc: `apollo-restore: the date distribution of a text (${shown.textContent}). Probability of each 25-year span; ` +
        "shaded, and marked below the axis: the 80 % interval; line: the median." });
    if (download.dataset.url) URL.revokeObjectURL(download.dataset.url);
    download.dataset.url = URL.createObjectURL(new Blob([file], { type: "image/svg+xml;charset=utf-8" }));
    download.href = download.dataset.url;
    download.textContent = "Download the plot (SVG)";
  };
  toggle.addEventListener("click", () => { view.full = !view.full; draw(); });
  // drawn again at the width it is shown, when that changes (a phone turned, a window resized)
  if (window.ResizeObserver) {
    new ResizeObserver(() => { if (holder.isConnected && Math.floor(holder.clientWidth) !== view.width) draw(); }).observe(holder);
  }
  return { figure, draw };
}

async function attributeText() {
  const box = $("attribute-result");
  box.replaceChildren(el("p", { class: "none", text: "Dating and placing the text…" }));
  try {
    const found = await api("/api/attribute", { text: $("leiden").value });
    const d = found.date;
    const summary = `Written about ${yearLabel(d.year)}: ${Math.round(d.interval * 100)} % of the probability lies between ` +
      `${yearLabel(d.low)} and ${yearLabel(d.high)}. Most probable place: ${found.places[0].place} (${percent(found.places[0].prob)}).` +
      (found.districts && found.districts.length ? ` Most probable district: ${found.districts[0].name} (${percent(found.districts[0].prob)}).` : "") +
      (found.little ? ` The text is short (${found.letters} letters): little can be said.` : "");
    const chart = dateFigure(d, summary);
    box.replaceChildren(
      el("p", { id: "attribute-summary", text: summary }),
      chart.figure,
      el("h3", { text: "Places" }),
      el("ol", { class: "places" }, found.places.map((p) => el("li", {}, `${p.place} — ${percent(p.prob)}`))),
    );
    if (found.districts && found.districts.length) {  // nomes or regions: each with its places
      box.append(el("h3", { text: "Districts (nome or region)" }),
        el("ol", { class: "districts" }, found.districts.map((g) => el("li", {},
          `${g.name} — ${percent(g.prob)}`,
          el("span", { class: "help", text: ": " + g.places.map((p) => `${p.place} ${percent(p.prob)}`).join(", ") })))));
    }
    chart.draw();  // in the page: drawn at the width it has there
    for (const w of found.warnings || []) box.insertBefore(el("p", { class: "warnings", text: w }), box.children[1]);
    if (found.formula) {  // the dating formula read: the year it gives and how sure
      const f = found.formula;
      const read = f.kind === "name" ? "Dated names read: “" : `Dating formula read: year ${f.regnal_year} in “`;
      box.insertBefore(el("p", { class: "formula" }, read,
        el("span", { class: "reading", lang: "grc", text: f.words }),
        `” gives ${yearLabel(f.year)} (${percent(f.prob)} within a year).`), box.children[1]);
    }
    const dated = found.parallels.filter((p) => p.lo !== null && p.lo !== undefined);  // the server lists dated ones only
    if (dated.length) {
      box.append(el("h3", { text: "Dated parallels" }), el("ul", {}, dated.map((p) => el("li", {},
        docLink(p.label || p.doc, p.url),
        ` (${p.lo === p.hi ? yearLabel(p.lo) : `${yearLabel(p.lo)} – ${yearLabel(p.hi)}`}` +
        `${p.place ? ", " + p.place : ""}): ${p.longest} letters shared — `,
        el("span", { class: "reading", lang: "grc", text: p.snippet })))));
    }
  } catch (err) {
    box.replaceChildren(el("p", { class: "none", text: `Unavailable: ${err.message}` }));
  }
}

// ---- EpiDoc upload and export ------------------------------------------------------------

async function openEpidoc(file) {
  stopRestoring();
  clearError();
  setBusy(true, `Reading ${file.name}…`);
  try {
    const form = new FormData();
    form.append("file", file);
    const doc = await api("/api/epidoc", form, true);
    state.source = { xml: await file.text(), leiden: doc.leiden };
    $("leiden").value = doc.leiden;
    describeText();
    clearResults();  // the previous text's restoration and provenance are not this file's
    setBusy(false, `Opened ${doc.id}: ${doc.gaps} gap${doc.gaps === 1 ? "" : "s"}${doc.gaps ? "" : " to restore"}.`);
    if (doc.gaps) await restore();
  } catch (err) {
    clearResults();
    setBusy(false, "");
    showError(err);
  }
}

// the other top readings of a gap (its last unpinned candidates), exported as alternatives
function alternativesOf(number, chosen) {
  if (!$("with-alternatives").checked) return [];
  return (state.cache[number] || []).filter((c) => c.text !== chosen).slice(0, 4)
    .map((c) => ({ text: c.text, display: c.display || null, prob: c.prob }));
}

async function exportAs(format) {
  if (!state.result) return;
  const choices = {};
  for (const gap of state.result.gaps) {
    if (gap.pinned !== null) {
      const picked = state.pinCands[gap.number];
      const display = picked && picked.text === gap.pinned ? picked.display || null : null;
      choices[gap.number] = { text: gap.pinned, display, prob: state.pinProbs[gap.number] ?? null, alternatives: alternativesOf(gap.number, gap.pinned) };
    } else if ($("fill-all").checked && gap.candidates.length) {
      const top = gap.candidates[0];
      choices[gap.number] = { text: top.text, display: top.display || null, prob: top.prob, alternatives: alternativesOf(gap.number, top.text) };
    }
  }
  clearError();
  try {
    // an opened EpiDoc file goes out as itself, its readings in place (the server numbers its gaps
    // as the Leiden it was read as), not rebuilt from that Leiden
    const source = state.source && state.source.leiden === state.text ? state.source.xml : state.text;
    const out = await api("/api/export", { text: source, choices, format });
    $("export-result").hidden = false;
    $("export-output").value = out.content;
    const link = $("export-download");
    if (link.dataset.url) URL.revokeObjectURL(link.dataset.url);
    link.dataset.url = URL.createObjectURL(new Blob([out.content], { type: `${out.media_type};charset=utf-8` }));
    link.href = link.dataset.url;
    link.download = out.filename;
    link.textContent = `Download ${out.filename}`;
    $("status").textContent = `Exported ${format === "epidoc" ? "EpiDoc" : "Leiden"}: ${out.machine_readings} machine reading${out.machine_readings === 1 ? "" : "s"} marked.`;
  } catch (err) {
    showError(err);
  }
}

// ---- start -------------------------------------------------------------------------------

// the help line about the example text is true only while the example is in the box
function describeText() { $("example-help").hidden = $("leiden").value !== state.example; }

async function start() {
  state.example = $("leiden").value;
  $("leiden").addEventListener("input", describeText);
  $("restore").addEventListener("click", () => restore());
  $("stop").addEventListener("click", stopRestoring);
  $("leiden").addEventListener("keydown", (e) => { if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) { e.preventDefault(); restore(); } });
  $("epidoc-file").addEventListener("change", (e) => { if (e.target.files.length) openEpidoc(e.target.files[0]); });
  $("export-leiden").addEventListener("click", () => exportAs("leiden"));
  $("export-epidoc").addEventListener("click", () => exportAs("epidoc"));
  $("provenance").addEventListener("click", checkProvenance);
  $("attribute").addEventListener("click", attributeText);
  try {
    state.health = await api("/api/health");
    const p = state.health.parallels ? "parallel passages available" : "no parallel-passage index loaded";
    $("server-status").textContent = `Model: ${state.health.model_label || state.health.model} · ${p}.`;
    $("server-status").title = `model folder and members: ${state.health.model}`;
  } catch (err) {
    $("server-status").textContent = "The server does not answer; reload the page to retry.";
  }
}

document.addEventListener("DOMContentLoaded", start);
