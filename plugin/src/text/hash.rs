//! Content hashes: the SHA-256 of bytes in lower-case hex, and the key an
//! entry's text is known by (in the ledger, the recall signals and the
//! sweeps' records).

use sha2::{Digest, Sha256};

/// The key an entry's text is known by in the provenance ledger.
pub fn entry_hash(text: &str) -> String {
    sha256_hex(text.as_bytes())
}

pub fn sha256_hex(bytes: &[u8]) -> String {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let digest = Sha256::digest(bytes);
    let mut hex = String::with_capacity(64);
    for b in digest {
        hex.push(HEX[(b >> 4) as usize] as char);
        hex.push(HEX[(b & 15) as usize] as char);
    }
    hex
}
