//! The transcript parser, the injected-block stripper and the redactor.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    memory_core::fuzzing::transcript(&text);
});
