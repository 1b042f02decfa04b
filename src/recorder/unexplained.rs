//! Points where the settled board has read otherwise than the position last acted on, and
//! since when: the rules stage waits while it cannot explain a change (a breach must stand
//! still for a while), and while play goes on around a misread point no view stands still
//! long enough. Development 100315: after a camera bump a whole edge row read as white
//! stones, and the record said nothing for 70 s. Once points have read otherwise through
//! every settled view for [`PERSIST`] seconds, the recorder says so, once, until they read
//! right again.

use crate::games::Occupancy;
use std::collections::{BTreeMap, BTreeSet};

/// How long, in seconds of source time, a point must have read otherwise than the
/// position acted on, in every settled view, before it is reported: twice the longest
/// wait the rules stage takes on a still view (1.5 s for a breach), so a change it is
/// about to judge is not reported first.
pub(super) const PERSIST: f64 = 3.0;

#[derive(Debug, Default)]
pub(super) struct Unexplained {
    /// Per point (`[row, col]`), since when it has read otherwise.
    since: BTreeMap<[usize; 2], f64>,
    /// The points last reported, while any of them still reads otherwise: one report
    /// says the board is not what the record holds, and until that is put right every
    /// later move is stuck behind it too (100315: 40 more points in a minute), which a
    /// report each would only bury.
    reported: BTreeSet<[usize; 2]>,
}

impl Unexplained {
    /// One settled view (`settled`) against the position as acted on after it (`acted`),
    /// at source time `time`. Returns the points to report now, with the source time
    /// their difference began (the earliest): those that have read otherwise for
    /// [`PERSIST`], unless points reported before still do. A point that reads as acted
    /// on again is forgotten.
    pub(super) fn observe(
        &mut self,
        acted: &Occupancy,
        settled: &Occupancy,
        time: f64,
    ) -> Option<(Vec<[usize; 2]>, f64)> {
        let differing = acted.differences(settled);
        self.since.retain(|point, _| differing.contains(point));
        for point in differing {
            self.since.entry(point).or_insert(time);
        }
        self.reported.retain(|point| self.since.contains_key(point));
        if !self.reported.is_empty() {
            return None;
        }
        let due: BTreeMap<[usize; 2], f64> = self
            .since
            .iter()
            .filter(|&(_, &since)| time - since >= PERSIST - 1e-9)
            .map(|(&point, &since)| (point, since))
            .collect();
        let began = due.values().copied().reduce(f64::min)?;
        self.reported = due.keys().copied().collect();
        Some((due.into_keys().collect(), began))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn board(rows: &[&str]) -> Occupancy {
        Occupancy::from_text_rows(rows).unwrap()
    }

    #[test]
    fn points_read_otherwise_through_every_view_are_reported_once_after_the_persistence() {
        let acted = board(&[". . .", ". B .", ". . ."]);
        let misread = board(&["W W .", ". B .", ". . ."]);
        let mut unexplained = Unexplained::default();
        // Views come and go with hands between them; the misread stays.
        assert_eq!(unexplained.observe(&acted, &misread, 50.0), None);
        assert_eq!(unexplained.observe(&acted, &misread, 51.5), None);
        assert_eq!(
            unexplained.observe(&acted, &misread, 53.0),
            Some((vec![[0, 0], [0, 1]], 50.0))
        );
        // Said once: not again while it lasts, nor for the moves stuck behind it.
        assert_eq!(unexplained.observe(&acted, &misread, 60.0), None);
        let more = board(&["W W .", ". B .", ". . W"]);
        assert_eq!(unexplained.observe(&acted, &more, 61.0), None);
        assert_eq!(unexplained.observe(&acted, &more, 70.0), None);
        // One misread point reads right again, the other does not: still the same report.
        let less = board(&[". W .", ". B .", ". . W"]);
        assert_eq!(unexplained.observe(&acted, &less, 71.0), None);
        // Both put right; what is left unexplained has stood long enough on its own.
        let stuck = board(&[". . .", ". B .", ". . W"]);
        assert_eq!(
            unexplained.observe(&acted, &stuck, 72.0),
            Some((vec![[2, 2]], 61.0))
        );
    }

    #[test]
    fn a_point_that_reads_right_in_between_starts_afresh() {
        let acted = board(&[". . .", ". B .", ". . ."]);
        let placed = board(&[". . .", ". B W", ". . ."]);
        let mut unexplained = Unexplained::default();
        assert_eq!(unexplained.observe(&acted, &placed, 10.0), None);
        // The vote flickers back to the position acted on: nothing persisted.
        assert_eq!(unexplained.observe(&acted, &acted, 11.0), None);
        assert_eq!(unexplained.observe(&acted, &placed, 12.0), None);
        assert_eq!(unexplained.observe(&acted, &placed, 14.9), None);
        assert_eq!(
            unexplained.observe(&acted, &placed, 15.0),
            Some((vec![[1, 2]], 12.0))
        );
        // Put right, then wrong again: reported again after its persistence.
        assert_eq!(unexplained.observe(&acted, &acted, 16.0), None);
        assert_eq!(unexplained.observe(&acted, &placed, 17.0), None);
        assert_eq!(
            unexplained.observe(&acted, &placed, 20.0),
            Some((vec![[1, 2]], 17.0))
        );
    }

    #[test]
    fn a_move_acted_on_leaves_nothing_to_report() {
        let mut unexplained = Unexplained::default();
        let acted = board(&[". . .", ". B .", ". . ."]);
        let played = board(&[". . .", ". B W", ". . ."]);
        assert_eq!(unexplained.observe(&acted, &played, 10.0), None);
        // The rules stage committed the move: the position acted on is the one seen.
        assert_eq!(unexplained.observe(&played, &played, 20.0), None);
        assert!(unexplained.since.is_empty());
    }
}
