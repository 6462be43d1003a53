//! Dreaming's checks of a model's reply: validation, junk and rehydration.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    memory_core::fuzzing::rewrite(&text);
});
