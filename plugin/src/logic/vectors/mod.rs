//! The vector leg's arithmetic, for `ops::recall` and the index: compact
//! sign codes of the entry vectors (`codes`), a table of them scanned for a
//! shortlist (`table`), and the choice of the best and its recall against
//! exact search (`best`). Every entry keeps its exact f32 vector in the
//! index; the codes only choose which of them to read, so the scores a
//! search answers are exact cosine similarities.
//!
//! Why sign bits: 48 bytes an entry (for 384 dimensions) keeps two million
//! entries in about 100 MiB of guest memory, and a Hamming distance is six
//! XOR-and-popcounts. Centring first matters: sentence embeddings share a
//! common direction, and without removing it most bits agree for every
//! entry.

pub mod best;
pub mod codes;
pub mod table;

pub use best::{best, recall_of};
pub use codes::{Centre, CentreBuilder, QueryScorer};
pub use table::{CodeChange, CodeTable};

/// Entries the code scan keeps for the asymmetric rescoring (see
/// `QueryScorer`), per result asked for.
pub const SCAN_PER_RESULT: usize = 40;
/// Entries whose exact vectors are read and scored, per result asked for.
pub const EXACT_PER_RESULT: usize = 8;
/// Never fewer than these: small searches still look at a fair shortlist.
pub const MIN_SCAN: usize = 1_000;
pub const MIN_EXACT: usize = 200;

/// How many entries each stage keeps for `k` results: the code scan, then
/// the asymmetric rescoring (whose survivors are scored exactly).
pub fn shortlist_sizes(k: usize) -> (usize, usize) {
    (
        (k * SCAN_PER_RESULT).max(MIN_SCAN),
        (k * EXACT_PER_RESULT).max(MIN_EXACT),
    )
}

/// The ids whose exact vectors a search for `k` results scores: the whole
/// table when it is no larger than that, else the code scan's nearest
/// re-ranked against the query's vector.
pub fn shortlist(codes: &CodeTable, centre: &Centre, query: &[f32], k: usize) -> Vec<i64> {
    let (scan, exact) = shortlist_sizes(k);
    if codes.len() <= exact {
        return codes.ids().to_vec();
    }
    let near = codes.nearest(&centre.code(query), scan);
    codes.best_by(&QueryScorer::new(centre, query), &near, exact)
}
