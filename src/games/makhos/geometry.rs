//! The board's shape, computed once at compile time so move generation and change
//! classification only ever index tables.
//!
//! Squares are indexed 0..32, one less than their PDN number; bit `i` of a `u32` bitboard
//! is square `i + 1`. See the module documentation of `makhos` for where each number sits.

/// Marks "off the board" in [`NEIGHBOR`].
pub(super) const OFF: u8 = 32;

/// Diagonal directions as (row step, column step), rows counted downwards.
pub(super) const STEPS: [(i8, i8); 4] = [(-1, -1), (-1, 1), (1, -1), (1, 1)];

/// White sits at the bottom and moves up the board (rows decreasing); Black the reverse.
pub(super) const WHITE_FORWARD: [usize; 2] = [0, 1];
pub(super) const BLACK_FORWARD: [usize; 2] = [2, 3];
pub(super) const ALL_DIRECTIONS: [usize; 4] = [0, 1, 2, 3];

/// The row a White man promotes on (row 0, squares 29–32) and Black's (row 7, squares 1–4).
pub(super) const WHITE_PROMOTION: u32 = 0xF000_0000;
pub(super) const BLACK_PROMOTION: u32 = 0x0000_000F;

/// `(row, col)` of square index `index` on the `Occupancy` grid.
pub(super) const fn row_col(index: u8) -> (u8, u8) {
    let row = 7 - index / 4;
    // Numbers run right to left along a row, as seen from White's side.
    let col = 7 - 2 * (index % 4) - row % 2;
    (row, col)
}

/// The square index at `(row, col)`, or `None` for a light (unused) square.
pub(super) const fn index_at(row: usize, col: usize) -> Option<u8> {
    if row > 7 || col > 7 || (row + col).is_multiple_of(2) {
        return None;
    }
    Some(((7 - row) * 4 + (7 - col - row % 2) / 2) as u8)
}

const fn build_neighbors() -> [[u8; 4]; 32] {
    let mut table = [[OFF; 4]; 32];
    let mut index = 0;
    while index < 32 {
        let (row, col) = row_col(index as u8);
        let mut dir = 0;
        while dir < 4 {
            let r = row as i8 + STEPS[dir].0;
            let c = col as i8 + STEPS[dir].1;
            if r >= 0
                && r < 8
                && c >= 0
                && c < 8
                && let Some(next) = index_at(r as usize, c as usize)
            {
                table[index][dir] = next;
            }
            dir += 1;
        }
        index += 1;
    }
    table
}

/// The adjacent square in each direction, or [`OFF`].
pub(super) const NEIGHBOR: [[u8; 4]; 32] = build_neighbors();

const fn build_rays() -> [[u32; 4]; 32] {
    let mut table = [[0u32; 4]; 32];
    let mut index = 0;
    while index < 32 {
        let mut dir = 0;
        while dir < 4 {
            let mut ray = 0u32;
            let mut next = NEIGHBOR[index][dir];
            while next != OFF {
                ray |= 1 << next;
                next = NEIGHBOR[next as usize][dir];
            }
            table[index][dir] = ray;
            dir += 1;
        }
        index += 1;
    }
    table
}

/// Every square along each diagonal direction, as a bitboard, the start excluded.
pub(super) const RAY: [[u32; 4]; 32] = build_rays();

/// The direction in which `to` lies on a diagonal from `from`, if it does.
pub(super) fn direction_between(from: u8, to: u8) -> Option<usize> {
    (0..4).find(|&dir| RAY[from as usize][dir] & (1 << to) != 0)
}

/// Squares strictly between `from` and `to` along direction `dir` (`to` must be on that ray).
pub(super) fn between(from: u8, to: u8, dir: usize) -> u32 {
    RAY[from as usize][dir] & !RAY[to as usize][dir] & !(1 << to)
}

/// Number of steps from `from` to `to` along direction `dir`.
pub(super) fn distance(from: u8, to: u8, dir: usize) -> u32 {
    between(from, to, dir).count_ones() + 1
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbering_and_grid_agree_both_ways() {
        for index in 0..32u8 {
            let (row, col) = row_col(index);
            assert_eq!(index_at(row as usize, col as usize), Some(index));
        }
        // Square 1 is White's near right; square 4 White's near-left single corner.
        assert_eq!(row_col(0), (7, 6));
        assert_eq!(row_col(3), (7, 0));
        assert_eq!(row_col(4), (6, 7));
        assert_eq!(row_col(28), (0, 7));
        assert_eq!(row_col(31), (0, 1));
    }

    #[test]
    fn rays_stop_at_the_edge() {
        // The long diagonal from square 4 (row 7, col 0) to square 29 (row 0, col 7).
        assert_eq!(RAY[3][1].count_ones(), 7);
        assert_ne!(RAY[3][1] & (1 << 28), 0);
        assert_eq!(between(3, 28, 1).count_ones(), 6);
        assert_eq!(distance(3, 28, 1), 7);
        assert_eq!(NEIGHBOR[3][0], OFF);
    }
}
