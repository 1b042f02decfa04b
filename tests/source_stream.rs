//! Streams, without a network: a clip served over HTTP from a thread on the loopback, cut
//! off mid-way and served again, as a camera on Wi-Fi drops and returns.

mod source_support;

use kradan::source::live::Retry;
use kradan::source::stream::Stream;
use kradan::source::{FrameSource, SourceError, SourceKind};
use source_support::{mjpeg_clip, number_in};
use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

const QUICK: Retry = Retry {
    first_wait: Duration::from_millis(200),
    longest_wait: Duration::from_millis(400),
    budget: Duration::from_secs(4),
};

/// Answers one HTTP request with `body`, closing the connection after `send` bytes.
fn answer(mut client: TcpStream, body: &[u8], send: usize) {
    let mut reader = BufReader::new(client.try_clone().unwrap());
    let mut line = String::new();
    while reader.read_line(&mut line).is_ok_and(|n| n > 0) && line != "\r\n" {
        line.clear();
    }
    let head = format!(
        "HTTP/1.1 200 OK\r\nContent-Type: video/x-msvideo\r\nContent-Length: {}\r\n\
         Connection: close\r\n\r\n",
        body.len()
    );
    // The reader may hang up first; that is its business.
    let _ = client
        .write_all(head.as_bytes())
        .and_then(|_| client.write_all(&body[..send.min(body.len())]));
}

/// Serves `connections` requests on `listener`, each cut after `send` bytes, then stops
/// listening. Gives up waiting after 20 s so a failing test cannot hang.
fn serve(
    listener: TcpListener,
    body: Arc<Vec<u8>>,
    send: usize,
    connections: usize,
) -> JoinHandle<()> {
    listener.set_nonblocking(true).unwrap();
    std::thread::spawn(move || {
        let deadline = Instant::now() + Duration::from_secs(20);
        let mut served = 0;
        while served < connections && Instant::now() < deadline {
            match listener.accept() {
                Ok((client, _)) => {
                    client.set_nonblocking(false).unwrap();
                    answer(client, &body, send);
                    served += 1;
                }
                Err(_) => std::thread::sleep(Duration::from_millis(10)),
            }
        }
    })
}

/// A frame read: index, time, the number it shows, and its note.
type Seen = (u64, f64, u64, Option<String>);

/// Reads until the end or an error.
fn read_all(stream: &mut dyn FrameSource) -> (Vec<Seen>, Option<SourceError>) {
    let mut frames = Vec::new();
    loop {
        match stream.next_frame(true) {
            Ok(Some(f)) => frames.push((f.index, f.time, number_in(&f.image), f.note)),
            Ok(None) => return (frames, None),
            Err(e) => return (frames, Some(e)),
        }
    }
}

#[test]
fn a_stream_that_drops_and_returns_goes_on_with_a_note() {
    let dir = tempfile::tempdir().unwrap();
    let clip = mjpeg_clip(dir.path(), "served.avi", 40, 10.0);
    let body = Arc::new(std::fs::read(&clip).unwrap());
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let url = format!("http://127.0.0.1:{port}/served.avi");

    let first = serve(listener, body.clone(), body.len() / 2, 1);
    let mut stream = Stream::open_with(&url, QUICK).unwrap();
    assert_eq!(stream.kind(), SourceKind::Stream);
    assert_eq!(stream.frame_count(), None);
    assert!(
        stream
            .describe()
            .starts_with(&format!("stream {url} (240×160")),
        "{}",
        stream.describe()
    );
    first.join().unwrap();
    // Down for a second, then back on the same port.
    let again = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_secs(1));
        let listener = TcpListener::bind(("127.0.0.1", port)).unwrap();
        serve(listener, body.clone(), body.len(), 1).join().unwrap();
    });
    let (frames, error) = read_all(&mut stream);
    again.join().unwrap();
    assert!(error.is_none(), "{error:?}");

    let back = frames
        .iter()
        .position(|f| f.3.is_some())
        .expect("a note after the drop");
    assert!((10..30).contains(&back), "dropped after {back} frames");
    let note = frames[back].3.as_deref().unwrap();
    assert!(
        note.starts_with(&format!("stream {url} dropped at ")),
        "{note}"
    );
    let seconds_back: f64 = note
        .rsplit("back after ")
        .next()
        .and_then(|s| s.trim_end_matches(" s").parse().ok())
        .unwrap();
    assert!((0.6..3.0).contains(&seconds_back), "{note}");
    assert!(frames.iter().filter(|f| f.3.is_some()).count() == 1);
    // Indices run on across the drop; time is the clock's and jumps over the gap.
    assert!(frames.iter().enumerate().all(|(i, f)| f.0 == i as u64));
    assert!(frames[back].1 - frames[back - 1].1 >= 0.6);
    // The file served again plays from its start, to its end.
    assert_eq!(frames[back].2, 0);
    assert_eq!(frames.len() - back, 40);
    assert!(
        frames[..back - 1]
            .iter()
            .enumerate()
            .all(|(i, f)| f.2 == i as u64)
    );
}

#[test]
fn a_stream_that_never_returns_is_given_up_with_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let clip = mjpeg_clip(dir.path(), "gone.avi", 40, 10.0);
    let body = Arc::new(std::fs::read(&clip).unwrap());
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!(
        "http://127.0.0.1:{}/gone.avi",
        listener.local_addr().unwrap().port()
    );
    let server = serve(listener, body.clone(), body.len() / 2, 1);
    let mut stream = Stream::open_with(&url, QUICK).unwrap();
    server.join().unwrap();
    let started = Instant::now();
    let (frames, error) = read_all(&mut stream);
    assert!(!frames.is_empty());
    match error {
        Some(e @ SourceError::StreamGone { .. }) => {
            let message = e.to_string();
            assert!(
                message.starts_with(&format!("stream {url} dropped at")),
                "{message}"
            );
            assert!(message.contains("did not come back after"), "{message}");
            assert!(
                message.contains("last attempt: FFmpeg could not open it"),
                "{message}"
            );
        }
        other => panic!("expected StreamGone, got {other:?}"),
    }
    let waited = started.elapsed().as_secs_f64();
    assert!((3.9..10.0).contains(&waited), "{waited}");
}
