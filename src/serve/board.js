"use strict";
// Draws a Go position (rows of '.', 'B', 'W') as SVG, for the overlay and the referee desk.
const STARS = { 9: [2, 4, 6], 13: [3, 6, 9], 19: [3, 9, 15] };

function boardSvg(moment, px, flagged) {
  const n = moment.size;
  const cell = px / (n + 1);
  const at = (i) => (cell * (i + 1)).toFixed(1);
  const parts = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${px}" height="${px}" viewBox="0 0 ${px} ${px}">`,
    `<rect width="${px}" height="${px}" rx="${(cell * 0.3).toFixed(1)}" fill="#dcb35c" stroke="#8a6a2a"/>`,
  ];
  for (let i = 0; i < n; i++) {
    parts.push(`<line x1="${at(0)}" y1="${at(i)}" x2="${at(n - 1)}" y2="${at(i)}" stroke="#3b2a10" stroke-width="1"/>`);
    parts.push(`<line x1="${at(i)}" y1="${at(0)}" x2="${at(i)}" y2="${at(n - 1)}" stroke="#3b2a10" stroke-width="1"/>`);
  }
  const stars = STARS[n] || [];
  for (const r of stars) {
    for (const c of stars) {
      if (n === 9 && (r === 4) !== (c === 4)) continue;
      parts.push(`<circle cx="${at(c)}" cy="${at(r)}" r="${(cell * 0.09).toFixed(1)}" fill="#3b2a10"/>`);
    }
  }
  moment.rows.forEach((row, r) => {
    [...row].forEach((ch, c) => {
      if (ch !== "B" && ch !== "W") return;
      const fill = ch === "B" ? "#111" : "#f4f4f0";
      parts.push(`<circle class="stone ${ch}" cx="${at(c)}" cy="${at(r)}" r="${(cell * 0.47).toFixed(1)}" fill="${fill}" stroke="#000" stroke-width="0.8"/>`);
    });
  });
  for (const [r, c] of flagged || []) {
    const h = cell * 0.55;
    parts.push(`<rect class="flagged" x="${(cell * (c + 1) - h).toFixed(1)}" y="${(cell * (r + 1) - h).toFixed(1)}" width="${(2 * h).toFixed(1)}" height="${(2 * h).toFixed(1)}" fill="none" stroke="#e0102a" stroke-width="3"/>`);
  }
  const last = moment.last_move;
  if (last && last.cell) {
    const [r, c] = last.cell;
    const color = last.color === "black" ? "#f4f4f0" : "#111";
    parts.push(`<circle class="last-move" cx="${at(c)}" cy="${at(r)}" r="${(cell * 0.22).toFixed(1)}" fill="none" stroke="${color}" stroke-width="${Math.max(2, cell * 0.08).toFixed(1)}"/>`);
  }
  parts.push("</svg>");
  return parts.join("");
}

function escapeHtml(text) {
  return String(text ?? "").replace(/[&<>"']/g, (ch) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;" })[ch]);
}

function moveText(last) {
  if (!last) return "no move yet";
  return `${last.number}. ${last.color === "black" ? "Black" : "White"} ${last.point || "pass"}`;
}

function evidenceUrl(board, path) {
  return `/api/boards/${encodeURIComponent(board)}/evidence/${encodeURIComponent(path.split("/").pop())}`;
}
