"use strict";
// Draws a position as SVG, for the overlay and the referee desk: Go stones on the points
// (rows of '.', 'B', 'W'), or Mak-hos and Makruk pieces in the squares (moment.pieces).
const STARS = { 9: [2, 4, 6], 13: [3, 6, 9], 19: [3, 9, 15] };
// Makruk figures by the letters Fairy-Stockfish writes: khun, met, khon, ma, ruea, bia,
// drawn as the chess figures that move most like them.
const MAKRUK_GLYPHS = { K: "\u265A", M: "\u265B", S: "\u265D", N: "\u265E", R: "\u265C", P: "\u265F" };

function boardSvg(moment, px, flagged) {
  if (moment.pieces) return squaresSvg(moment, px, flagged);
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

// An 8×8 board: pieces stand inside squares. Mak-hos is played on the dark squares of a
// checkered board ('M' a man, 'K' a king); Makruk on a plain one. Upper case is White.
function squaresSvg(moment, px, flagged) {
  const cell = px / 8.6;
  const margin = cell * 0.3;
  const x = (c) => margin + cell * c;
  const makhos = moment.game === "makhos";
  const parts = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${px}" height="${px}" viewBox="0 0 ${px} ${px}">`,
    `<rect width="${px}" height="${px}" rx="${(cell * 0.15).toFixed(1)}" fill="#7a4f24"/>`,
  ];
  for (let r = 0; r < 8; r++) {
    for (let c = 0; c < 8; c++) {
      const dark = makhos && (r + c) % 2 === 1;
      const fill = dark ? "#5b3a1c" : "#e3c48f";
      parts.push(`<rect x="${x(c).toFixed(1)}" y="${x(r).toFixed(1)}" width="${cell.toFixed(1)}" height="${cell.toFixed(1)}" fill="${fill}" stroke="#3b2a10" stroke-width="${makhos ? 0.5 : 1.2}"/>`);
    }
  }
  const last = moment.last_move;
  const marked = (cellAt, colour) => {
    if (!cellAt) return;
    const [r, c] = cellAt;
    parts.push(`<rect class="last-move" x="${(x(c) + 2).toFixed(1)}" y="${(x(r) + 2).toFixed(1)}" width="${(cell - 4).toFixed(1)}" height="${(cell - 4).toFixed(1)}" fill="${colour}" fill-opacity="0.35"/>`);
  };
  if (last) {
    marked(last.from, "#f0e040");
    marked(last.cell, "#f0e040");
  }
  moment.pieces.forEach((row, r) => {
    [...row].forEach((ch, c) => {
      if (ch === ".") return;
      const white = ch === ch.toUpperCase();
      const cx = (x(c) + cell / 2).toFixed(1);
      const cy = (x(r) + cell / 2).toFixed(1);
      const fill = white ? "#f4f4f0" : "#1a1a1a";
      const ink = white ? "#1a1a1a" : "#f4f4f0";
      parts.push(`<circle class="piece ${white ? "W" : "B"}" cx="${cx}" cy="${cy}" r="${(cell * 0.4).toFixed(1)}" fill="${fill}" stroke="#000" stroke-width="0.8"/>`);
      const kind = ch.toUpperCase();
      if (makhos) {
        if (kind === "K") {
          parts.push(`<circle class="king" cx="${cx}" cy="${cy}" r="${(cell * 0.24).toFixed(1)}" fill="none" stroke="${ink}" stroke-width="${Math.max(1.5, cell * 0.06).toFixed(1)}"/>`);
        }
      } else {
        const glyph = MAKRUK_GLYPHS[kind] || kind;
        parts.push(`<text x="${cx}" y="${cy}" dy="0.35em" text-anchor="middle" font-size="${(cell * 0.55).toFixed(1)}" fill="${ink}">${glyph}</text>`);
      }
    });
  });
  for (const [r, c] of flagged || []) {
    parts.push(`<rect class="flagged" x="${x(c).toFixed(1)}" y="${x(r).toFixed(1)}" width="${cell.toFixed(1)}" height="${cell.toFixed(1)}" fill="none" stroke="#e0102a" stroke-width="3"/>`);
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
