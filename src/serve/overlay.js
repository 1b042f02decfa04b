"use strict";
// The broadcast overlay: one board, redrawn on every update pushed by the server.
const boardName = decodeURIComponent(location.pathname.split("/").pop());
// What arrived when, for the end-to-end tests and the load test.
window.kradanUpdates = [];

function render(view) {
  document.getElementById("title").textContent = view.name;
  document.getElementById("black").textContent = view.players.black || "Black";
  document.getElementById("white").textContent = view.players.white || "White";
  const now = view.now;
  const flagged = view.open_flags.flatMap((f) => f.points);
  document.getElementById("board").innerHTML = now ? boardSvg(now, 420, flagged) : "";
  document.getElementById("cap-black").textContent = now ? `· ${now.captures.black} captured` : "";
  document.getElementById("cap-white").textContent = now ? `· ${now.captures.white} captured` : "";
  document.getElementById("move").textContent = now ? `Move ${moveText(now.last_move)}` : "waiting for the board";
  let status = view.status.replace("-", " ");
  if (view.counts && view.counts.length) status += ` · ${view.counts.join(" · ")}`;
  if (view.result) status += ` · ${view.result}`;
  if (view.message) status += ` · ${view.message}`;
  document.getElementById("status").textContent = status;
  const banner = document.getElementById("banner");
  const flag = view.open_flags[view.open_flags.length - 1];
  if (flag) {
    banner.textContent = `⚑ ${flag.flag}${flag.rules.length ? " (" + flag.rules.join(", ") + ")" : ""}: ${flag.message}`;
    banner.classList.add("on");
  } else {
    banner.classList.remove("on");
  }
  document.body.dataset.seq = view.seq ?? "";
  document.body.dataset.moves = now ? now.number : 0;
}

async function start() {
  const answer = await fetch(`/api/boards/${encodeURIComponent(boardName)}`);
  if (answer.ok) render(await answer.json());
  const source = new EventSource(`/api/stream?board=${encodeURIComponent(boardName)}`);
  source.addEventListener("update", (message) => {
    const update = JSON.parse(message.data);
    window.kradanUpdates.push({ seq: update.seq, kind: update.event.kind, synced_ms: update.synced_ms, received_ms: Date.now() });
    render(update.view);
  });
  source.addEventListener("missed", () => location.reload());
}
start();
