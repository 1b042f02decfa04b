//! GNU Go over GTP for the cross-check tests: the library's client (`kradan::peers::Gtp`),
//! with a failure to talk to it ending the test.
// Each test binary uses its own share of these.
#![allow(dead_code)]

use std::path::Path;

pub struct Gtp(kradan::peers::Gtp);

impl Gtp {
    /// GNU Go's defaults already forbid suicide and use simple ko, but they are spelled out
    /// so that a changed default cannot silently change what is being compared.
    pub fn start(program: &Path) -> Gtp {
        let args = ["--forbid-suicide", "--simple-ko"].map(String::from);
        Gtp(kradan::peers::Gtp::start(program, &args)
            .unwrap_or_else(|e| panic!("cannot start {}: {e:#}", program.display())))
    }

    /// Every command sent at once, then one answer each: `Ok` for `= …`, `Err` for `? …`.
    pub fn batch(&mut self, commands: &[String]) -> Vec<Result<String, String>> {
        self.0
            .batch(commands)
            .unwrap_or_else(|e| panic!("GNU Go: {e:#}"))
    }

    pub fn ask(&mut self, command: &str) -> Result<String, String> {
        self.0
            .ask(command)
            .unwrap_or_else(|e| panic!("GNU Go: {e:#}"))
    }

    pub fn must(&mut self, command: &str) -> String {
        self.0.must(command).unwrap_or_else(|e| panic!("{e:#}"))
    }
}
