"use strict";
// The referee desk: every board, its events and flags, a timeline of recorded positions
// beside the camera frame of each moment, and the referee's actions.
const state = { boards: [], selected: null, view: null, events: [], step: 0, following: true };
const $ = (id) => document.getElementById(id);
const api = (path) => `/api/boards/${encodeURIComponent(state.selected)}${path}`;

for (const key of ["by", "token"]) {
  $(key).value = localStorage.getItem(`kradan-${key}`) || "";
  $(key).addEventListener("change", () => localStorage.setItem(`kradan-${key}`, $(key).value));
}

async function getJson(url) {
  const answer = await fetch(url);
  const body = await answer.json();
  if (!answer.ok) throw new Error(body.error || answer.statusText);
  return body;
}

function renderBoards() {
  $("boards").innerHTML = "";
  for (const view of state.boards) {
    const button = document.createElement("button");
    button.textContent = `${view.name} · ${view.now ? view.now.number : 0}`;
    button.dataset.board = view.name;
    if (view.name === state.selected) button.classList.add("on");
    if (view.open_flags.length) button.classList.add("flagged");
    button.addEventListener("click", () => select(view.name));
    $("boards").appendChild(button);
  }
}

function describe(event) {
  const d = event.detail || {};
  if (event.kind === "move") return `${event.color} ${event.notation || "pass"}`;
  return d.message || d.note || d.flag || "";
}

function renderEvents() {
  const rows = state.events.map((event) => {
    const evidence = (event.evidence || []).map((e) => `<a href="${evidenceUrl(state.selected, e.path)}" target="_blank">${escapeHtml(e.path.split("/").pop())}</a>`).join(" ");
    const klass = event.kind === "flag" ? "flag" : event.kind === "resolved" ? "resolved" : "";
    return `<tr class="${klass}" data-seq="${event.seq}"><td>${event.seq}</td><td>${escapeHtml(event.kind)}${event.detail && event.detail.flag ? " " + escapeHtml(event.detail.flag) : ""}</td><td>${event.move_number ?? ""}</td><td>${escapeHtml(describe(event))}</td><td>${escapeHtml((event.rules || []).join(", "))}</td><td>${escapeHtml(event.detail && event.detail.by || "")}</td><td>${evidence}</td></tr>`;
  });
  $("events").innerHTML = rows.join("");
  const box = $("events-box");
  box.scrollTop = box.scrollHeight;
}

function renderView() {
  const view = state.view;
  if (!view) return;
  $("heading").textContent = `${view.name} — ${view.players.black || "Black"} (B) v ${view.players.white || "White"} (W)`;
  const now = view.now;
  $("summary").textContent = `${view.status.replace("-", " ")} · ${now ? "move " + now.number : "no game yet"}${view.counts && view.counts.length ? " · " + view.counts.join(" · ") : ""}${view.result ? " · " + view.result : ""}${view.message ? " · " + view.message : ""}`;
  const go = view.game === "go";
  $("go-actions").hidden = !go;
  $("eight-actions").hidden = go;
  const extension = { go: "sgf", makhos: "pdn", makruk: "pgn" }[view.game] || "sgf";
  $("download").href = api(`/record.${extension}`);
  $("download").textContent = `the record (${extension.toUpperCase()})`;
  $("bundle").href = api("/evidence.zip");
  $("flags").innerHTML = view.open_flags.length ? "" : "none";
  for (const flag of view.open_flags) {
    const box = document.createElement("div");
    box.className = "flagbox";
    box.dataset.flag = flag.flag_id;
    box.innerHTML = `<b>${escapeHtml(flag.flag)}</b> at move ${flag.move_number ?? "?"} (${escapeHtml(flag.rules.join(", ") || "no rule")}; ${escapeHtml(flag.penalties.join(", "))})<br>${escapeHtml(flag.message)}<br>`;
    const show = document.createElement("button");
    show.textContent = "show";
    show.addEventListener("click", () => { if (flag.move_number) showStep(Math.min(flag.move_number, maxStep())); });
    const resolve = document.createElement("button");
    resolve.textContent = "resolve";
    resolve.className = "resolve";
    resolve.addEventListener("click", () => act({ action: "resolve", flag_id: flag.flag_id, note: "put right at the board" }));
    const dismiss = document.createElement("button");
    dismiss.textContent = "dismiss";
    dismiss.className = "dismiss";
    dismiss.addEventListener("click", () => act({ action: "dismiss", flag_id: flag.flag_id, note: "no irregularity" }));
    box.append(show, resolve, dismiss);
    $("flags").appendChild(box);
  }
  $("step").max = maxStep();
  if (state.following) showStep(maxStep());
}

function maxStep() {
  return state.view && state.view.now ? state.view.now.number : 0;
}

async function showStep(number) {
  state.step = Math.max(0, Math.min(number, maxStep()));
  state.following = state.step === maxStep();
  $("step").value = state.step;
  $("step-label").textContent = `move ${state.step} of ${maxStep()}`;
  if (!state.view || !state.view.now) return;
  try {
    const moment = await getJson(api(`/moves/${state.step}`));
    if (moment.number !== state.step) return;
    $("moment-board").innerHTML = boardSvg(moment, 320, []);
    $("moment-board").dataset.step = moment.number;
    const frame = $("moment-frame");
    if (moment.evidence) frame.src = evidenceUrl(state.selected, moment.evidence); else frame.removeAttribute("src");
    $("moment-caption").textContent = `${moveText(moment.last_move)}${moment.video_time != null ? " · t=" + moment.video_time.toFixed(2) + " s" : ""} · captures B ${moment.captures.black} W ${moment.captures.white}`;
  } catch (error) {
    $("moment-caption").textContent = error.message;
  }
}

async function select(name) {
  state.selected = name;
  state.following = true;
  state.view = await getJson(api(""));
  state.events = (await getJson(api("/events"))).events;
  renderBoards();
  renderEvents();
  renderView();
}

async function act(body) {
  const outcome = $("outcome");
  body.by = $("by").value.trim() || "referee";
  try {
    const answer = await fetch(api("/actions"), {
      method: "POST",
      headers: { "Content-Type": "application/json", Authorization: `Bearer ${$("token").value}` },
      body: JSON.stringify(body),
    });
    const reply = await answer.json();
    outcome.className = answer.ok ? "" : "error";
    outcome.textContent = answer.ok ? reply.message : `${answer.status}: ${reply.error}`;
  } catch (error) {
    outcome.className = "error";
    outcome.textContent = error.message;
  }
}

$("pass-black").addEventListener("click", () => act({ action: "pass", color: "black" }));
$("pass-white").addEventListener("click", () => act({ action: "pass", color: "white" }));
$("undo").addEventListener("click", () => act({ action: "undo-last-move" }));
$("replace").addEventListener("click", () => act({ action: "replace-last-move", point: $("replace-point").value.trim() }));
$("undo-eight").addEventListener("click", () => act({ action: "undo-last-move" }));
$("replace-eight").addEventListener("click", () => act({ action: "replace-last-move", move: $("replace-move").value.trim() }));
$("dead").addEventListener("click", () => act({ action: "dead", points: $("dead-points").value.split(/[\s,]+/).filter(Boolean) }));
$("step").addEventListener("input", () => showStep(Number($("step").value)));
$("first").addEventListener("click", () => showStep(0));
$("prev").addEventListener("click", () => showStep(state.step - 1));
$("next").addEventListener("click", () => showStep(state.step + 1));
$("last").addEventListener("click", () => showStep(maxStep()));

async function start() {
  state.boards = (await getJson("/api/boards")).boards;
  renderBoards();
  const wanted = new URLSearchParams(location.search).get("board");
  const first = state.boards.find((b) => b.name === wanted) || state.boards[0];
  if (first) await select(first.name);
  const source = new EventSource("/api/stream");
  source.addEventListener("update", (message) => {
    const update = JSON.parse(message.data);
    const index = state.boards.findIndex((b) => b.name === update.board);
    if (index >= 0) state.boards[index] = update.view;
    renderBoards();
    if (update.board !== state.selected) return;
    state.view = update.view;
    if (!state.events.some((e) => e.seq === update.event.seq)) state.events.push(update.event);
    renderEvents();
    renderView();
  });
  source.addEventListener("missed", () => location.reload());
}
start();
