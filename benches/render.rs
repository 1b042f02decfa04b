//! What `kradan render` costs on this machine's cores (the renderer uses every core it is
//! given: two here): a whole 60-move 9×9 game at 1280×720 and 15 fps, written as H.264 and
//! as MJPEG — the issue asks for under a minute, so tests can render footage on the fly —
//! and one frame of a 19×19 middle game with an arm over the board.

use criterion::{Criterion, criterion_group, criterion_main};
use kradan::render::scene::{SceneRequest, Style};
use kradan::render::{Codec, RenderOptions, render};
use opencv::prelude::*;
use std::hint::black_box;
use std::path::Path;
use std::time::Duration;

fn options(codec: Codec) -> RenderOptions {
    RenderOptions {
        seed: 4,
        style: Style::Varied,
        codec,
        scene: SceneRequest {
            resolution: Some((1280, 720)),
            fps: Some(15.0),
            tilt: None,
        },
        ..RenderOptions::default()
    }
}

fn whole_game(c: &mut Criterion) {
    let record = Path::new(env!("CARGO_MANIFEST_DIR")).join("benches/data/gnugo-9x9-60-moves.sgf");
    let mut group = c.benchmark_group("render");
    group.sample_size(10);
    group.measurement_time(Duration::from_secs(60));
    for (name, codec) in [
        ("9x9_60_moves_720p_15fps_h264", Codec::H264),
        ("9x9_60_moves_720p_15fps_mjpeg", Codec::Mjpeg),
    ] {
        group.bench_function(name, |b| {
            b.iter(|| {
                let out = tempfile::tempdir().expect("a temporary folder");
                let rendered =
                    render(&record, out.path(), &options(codec), |_, _| {}).expect("renders");
                black_box(rendered.frames)
            })
        });
    }
    group.finish();
}

fn one_frame(c: &mut Criterion) {
    let record = Path::new(env!("CARGO_MANIFEST_DIR")).join("samples/go/gnugo-19x19-opening.sgf");
    let text = std::fs::read_to_string(&record).expect("the sample record");
    let options = RenderOptions {
        workers: 1,
        ..options(Codec::Mjpeg)
    };
    let (script, layout) =
        kradan::render::plan(kradan::replay::Game::Go, &text, &options).expect("a plan");
    let scene =
        kradan::render::scene::draw_scene(layout, options.seed, options.style, &options.scene);
    let timeline = kradan::render::timeline::lay_out(&script, &scene, options.seed);
    // The middle of the first hand pass: an arm over the board.
    let pass = &timeline.passes[0];
    let index = (((pass.start() + pass.end()) / 2.0) * scene.fps) as usize;
    let mut renderer = kradan::render::compose::Renderer::new(&scene, &timeline, options.seed)
        .expect("a renderer");
    c.bench_function("render/frame_19x19_720p_with_arm_one_core", |b| {
        b.iter(|| black_box(renderer.frame(index).expect("a frame").0.rows()))
    });
}

criterion_group!(benches, one_frame, whole_game);
criterion_main!(benches);
