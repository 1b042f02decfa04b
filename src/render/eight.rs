//! Mak-hos (PDN) and Makruk (PGN) records as scripts.

use super::script::{AnomalyRequest, Script};

pub const KINDS: &[(&str, &str)] = &[];

pub fn makhos_script(
    _text: &str,
    _anomalies: &[AnomalyRequest],
    _seed: u64,
    _sloppiness: f64,
) -> Result<Script, String> {
    Err("Mak-hos rendering is not written yet".into())
}

pub fn makruk_script(
    _text: &str,
    _anomalies: &[AnomalyRequest],
    _seed: u64,
    _sloppiness: f64,
) -> Result<Script, String> {
    Err("Makruk rendering is not written yet".into())
}
