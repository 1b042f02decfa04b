//! A player's arm and hand as capsules (fingers, palm, forearm in a sleeve, upper arm),
//! posed from where the fingertips are: enough to cover the board the way a real arm
//! does, cast a shadow, and hold a piece.

use super::camera::{Vec3, add, dot, mul, sub, unit};

/// A capsule: the set of points within `radius` of the segment a–b (radius varying
/// linearly), drawn in skin or sleeve.
#[derive(Clone, Copy, Debug)]
pub struct Capsule {
    pub a: Vec3,
    pub b: Vec3,
    pub radius: [f64; 2],
    pub sleeve: bool,
}

/// The arm of the player on side `side` (−1 the bottom edge, +1 the top edge) whose
/// fingertips are at `tip`, in board-local coordinates (mm; z above the table). `reach`
/// is the board's half depth: the shoulder is beyond it.
pub fn arm(tip: Vec3, side: f64, reach: f64, surface: f64) -> Vec<Capsule> {
    let shoulder = [
        tip[0] * 0.3 + 120.0 * -side,
        side * (reach + 380.0),
        surface + 330.0,
    ];
    let back = unit([shoulder[0] - tip[0], shoulder[1] - tip[1], 0.0]);
    let across = [-back[1], back[0], 0.0];
    let up = [0.0, 0.0, 1.0];
    let knuckle = add(add(tip, mul(back, 32.0)), mul(up, 22.0));
    let wrist = add(add(knuckle, mul(back, 80.0)), mul(up, 28.0));
    let to_shoulder = sub(shoulder, wrist);
    let length = dot(to_shoulder, to_shoulder).sqrt();
    let elbow_reach = (length - 40.0).clamp(0.0, 260.0);
    // The elbow drops below the straight line to the shoulder when the arm is bent.
    let sag = (260.0 + 280.0 - length).max(0.0) * 0.5;
    let elbow = add(
        add(wrist, mul(unit(to_shoulder), elbow_reach)),
        [0.0, 0.0, -sag.min(120.0)],
    );
    let elbow = [elbow[0], elbow[1], elbow[2].max(surface + 40.0)];
    let mut capsules = vec![
        // Index and middle finger hold the piece between them, thumb beside.
        Capsule {
            a: tip,
            b: knuckle,
            radius: [7.5, 9.0],
            sleeve: false,
        },
        Capsule {
            a: add(add(tip, mul(across, 13.0)), mul(back, 6.0)),
            b: add(knuckle, mul(across, 15.0)),
            radius: [7.5, 9.0],
            sleeve: false,
        },
        Capsule {
            a: add(
                add(tip, mul(across, -16.0)),
                add(mul(back, 22.0), mul(up, 8.0)),
            ),
            b: add(wrist, mul(across, -18.0)),
            radius: [9.0, 12.0],
            sleeve: false,
        },
    ];
    for offset in [-12.0, 12.0] {
        capsules.push(Capsule {
            a: add(knuckle, mul(across, offset)),
            b: add(wrist, mul(across, offset * 0.6)),
            radius: [17.0, 19.0],
            sleeve: false,
        });
    }
    let cuff = add(wrist, mul(unit(sub(elbow, wrist)), 45.0));
    capsules.push(Capsule {
        a: wrist,
        b: cuff,
        radius: [24.0, 27.0],
        sleeve: false,
    });
    capsules.push(Capsule {
        a: cuff,
        b: elbow,
        radius: [36.0, 42.0],
        sleeve: true,
    });
    capsules.push(Capsule {
        a: elbow,
        b: shoulder,
        radius: [44.0, 52.0],
        sleeve: true,
    });
    capsules
}

/// Whether any part of the arm is above the board's rectangle (board-local half sizes).
pub fn over_board(capsules: &[Capsule], half: [f64; 2]) -> bool {
    capsules.iter().any(|c| {
        (0..=6).any(|i| {
            let t = i as f64 / 6.0;
            let p = add(c.a, mul(sub(c.b, c.a), t));
            let r = c.radius[0] + (c.radius[1] - c.radius[0]) * t;
            p[0].abs() < half[0] + r * 0.5 && p[1].abs() < half[1] + r * 0.5
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_arm_reaching_the_middle_is_over_the_board_and_one_at_rest_is_not() {
        let half = [220.0, 230.0];
        let reaching = arm([0.0, 0.0, 40.0], -1.0, 230.0, 20.0);
        assert!(over_board(&reaching, half));
        let resting = arm([0.0, -560.0, 200.0], -1.0, 230.0, 20.0);
        assert!(!over_board(&resting, half));
        // The arm goes back toward its own player's side.
        assert!(reaching.last().unwrap().b[1] < -230.0);
    }
}
