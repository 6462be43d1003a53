//! The Markdown and annotation parser: any bytes give entries whose line
//! ranges lie inside the file, in order, and whose text is the file's.
#![no_main]
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    memory_core::fuzzing::markdown(&text);
});
