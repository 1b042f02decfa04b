//! Reads a server-sent event stream, for the tests and the load test (`#[path]`-included).

use std::io::{BufRead, BufReader, Read};

/// Calls `each(event name, data)` for every event on `stream` until it ends or `each`
/// returns false.
pub fn read_events(stream: impl Read, mut each: impl FnMut(&str, &str) -> bool) {
    let mut name = String::new();
    for line in BufReader::new(stream).lines() {
        let Ok(line) = line else { return };
        if let Some(event) = line.strip_prefix("event: ") {
            name = event.to_string();
        } else if let Some(data) = line.strip_prefix("data: ")
            && !each(&name, data)
        {
            return;
        }
    }
}
