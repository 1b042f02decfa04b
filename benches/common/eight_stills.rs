//! The bundled rendered stills of the 8×8 games (1280×720), scaled to 1920×1080: the
//! frames the 8×8 benches measure on.

use opencv::core::{Mat, Size};
use opencv::{imgcodecs, imgproc};
use std::path::Path;

/// `samples/GAME/rendered-GAME.jpg` at 1920×1080.
pub fn full_hd(game: &str) -> Mat {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("samples")
        .join(game)
        .join(format!("rendered-{game}.jpg"));
    let still = imgcodecs::imread(path.to_str().expect("a path"), imgcodecs::IMREAD_COLOR)
        .expect("the bundled still");
    let mut full_hd = Mat::default();
    imgproc::resize(
        &still,
        &mut full_hd,
        Size::new(1920, 1080),
        0.0,
        0.0,
        imgproc::INTER_LINEAR,
    )
    .expect("a resize");
    full_hd
}
