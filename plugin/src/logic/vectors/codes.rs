//! Sign codes: one bit per dimension, set when the vector lies above the
//! centre (the mean of the entry vectors) in that dimension. Two codes are
//! compared by Hamming distance; a query, whose exact vector is at hand, is
//! compared to a code asymmetrically (`QueryScorer`), which ranks better.
//!
//! A centre is fixed when codes are made from it: a code is only comparable
//! with codes of the same centre.

/// The mean of a set of entry vectors, and how many it was taken over.
#[derive(Debug, Clone, PartialEq)]
pub struct Centre {
    pub mean: Vec<f32>,
    pub vectors: u64,
}

/// A table this many times larger than the set its centre was taken over
/// gets a new centre: a mean of the first few notes says little about a
/// year of them. Growing by a factor keeps the recomputation amortised.
const RECENTRE_GROWTH: u64 = 4;
/// Below this many entries a shortlist holds the whole table anyway.
const RECENTRE_MIN: u64 = 1_000;
/// A centre taken over this many vectors is kept for good: the mean of
/// sixteen thousand entries hardly moves, and re-coding millions of them
/// for a sharper one would cost more than it gains. So no re-coding ever
/// reads more than `RECENTRE_GROWTH` times this many vectors.
const RECENTRE_FINAL: u64 = 16_384;

impl Centre {
    /// u64 words per code.
    pub fn words(&self) -> usize {
        self.mean.len().div_ceil(64)
    }

    /// The code of a vector of this centre's dimensions.
    pub fn code(&self, v: &[f32]) -> Vec<u64> {
        let mut code = vec![0u64; self.words()];
        for (i, (x, m)) in v.iter().zip(&self.mean).enumerate() {
            if x > m {
                code[i / 64] |= 1 << (i % 64);
            }
        }
        code
    }

    /// Whether a table of `entries` should be re-coded from a new centre.
    pub fn is_stale_for(&self, entries: u64) -> bool {
        !self.is_final() && entries >= RECENTRE_MIN && entries > RECENTRE_GROWTH * self.vectors
    }

    /// Whether this centre is kept however the table grows.
    pub fn is_final(&self) -> bool {
        self.vectors >= RECENTRE_FINAL
    }

    /// Whether a table of `entries` with no centre yet should get one.
    pub fn due_for(entries: u64) -> bool {
        entries >= RECENTRE_MIN
    }
}

/// Sums vectors one at a time (in f64: two million small numbers), so the
/// centre of a large index is found without holding its vectors.
pub struct CentreBuilder {
    sum: Vec<f64>,
    vectors: u64,
}

impl CentreBuilder {
    pub fn new(dims: usize) -> CentreBuilder {
        CentreBuilder {
            sum: vec![0.0; dims],
            vectors: 0,
        }
    }

    /// Adds a vector; one of other dimensions is ignored.
    pub fn add(&mut self, v: &[f32]) {
        if v.len() != self.sum.len() {
            return;
        }
        for (s, x) in self.sum.iter_mut().zip(v) {
            *s += *x as f64;
        }
        self.vectors += 1;
    }

    /// The centre, or `None` when no vector was added.
    pub fn finish(self) -> Option<Centre> {
        (self.vectors > 0).then(|| Centre {
            mean: self
                .sum
                .iter()
                .map(|s| (s / self.vectors as f64) as f32)
                .collect(),
            vectors: self.vectors,
        })
    }
}

/// Bits that differ between two codes.
pub fn hamming(a: &[u64], b: &[u64]) -> u32 {
    a.iter().zip(b).map(|(x, y)| (x ^ y).count_ones()).sum()
}

/// Codes as stored: little-endian u64 words.
pub fn code_to_bytes(code: &[u64]) -> Vec<u8> {
    code.iter().flat_map(|w| w.to_le_bytes()).collect()
}

/// A stored code, or `None` when it is not `words` long.
pub fn code_from_bytes(bytes: &[u8], words: usize) -> Option<Vec<u64>> {
    (bytes.len() == words * 8).then(|| {
        bytes
            .chunks_exact(8)
            .map(|b| u64::from_le_bytes(b.try_into().expect("8 bytes")))
            .collect()
    })
}

/// Scores codes against a query's exact, centred vector: the sum of its
/// components, each signed by the code's bit (the dot product with the
/// code read as ±1 per dimension). Per code byte, the 256 possible partial
/// sums are tabled once per query, so a code costs one lookup per byte.
pub struct QueryScorer {
    table: Vec<f32>,
}

impl QueryScorer {
    pub fn new(centre: &Centre, query: &[f32]) -> QueryScorer {
        let bytes = centre.words() * 8;
        let centred: Vec<f32> = (0..bytes * 8)
            .map(|i| match (query.get(i), centre.mean.get(i)) {
                (Some(q), Some(m)) => q - m,
                _ => 0.0,
            })
            .collect();
        let mut table = vec![0f32; bytes * 256];
        for (byte, part) in centred.chunks_exact(8).enumerate() {
            for value in 0..256usize {
                table[byte * 256 + value] = part
                    .iter()
                    .enumerate()
                    .map(|(bit, x)| if value >> bit & 1 == 1 { *x } else { -*x })
                    .sum();
            }
        }
        QueryScorer { table }
    }

    pub fn score(&self, code: &[u64]) -> f32 {
        let mut sum = 0.0;
        for (w, word) in code.iter().enumerate() {
            for (b, byte) in word.to_le_bytes().into_iter().enumerate() {
                sum += self.table[(w * 8 + b) * 256 + byte as usize];
            }
        }
        sum
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn centre(mean: Vec<f32>) -> Centre {
        Centre { mean, vectors: 1 }
    }

    #[test]
    fn bits_say_which_side_of_the_centre_each_dimension_lies() {
        let c = centre(vec![0.5; 70]);
        let mut v = vec![0.0; 70];
        v[0] = 1.0;
        v[65] = 0.9;
        v[3] = 0.5; // on the centre: not above it
        assert_eq!(c.words(), 2);
        assert_eq!(c.code(&v), vec![1, 2]);
        assert_eq!(hamming(&c.code(&v), &[0, 0]), 2);
    }

    #[test]
    fn the_centre_is_the_mean_and_other_lengths_are_ignored() {
        let mut b = CentreBuilder::new(2);
        b.add(&[1.0, 0.0]);
        b.add(&[0.0, 1.0]);
        b.add(&[5.0]);
        let c = b.finish().unwrap();
        assert_eq!(c.mean, vec![0.5, 0.5]);
        assert_eq!(c.vectors, 2);
        assert!(CentreBuilder::new(2).finish().is_none());
    }

    #[test]
    fn codes_round_trip_and_a_wrong_length_is_refused() {
        let code = vec![u64::MAX, 7, 1 << 63];
        assert_eq!(code_from_bytes(&code_to_bytes(&code), 3), Some(code));
        assert_eq!(code_from_bytes(&[0; 17], 2), None);
    }

    #[test]
    fn a_centre_goes_stale_when_the_table_outgrows_it() {
        let c = Centre {
            mean: vec![0.0],
            vectors: 300,
        };
        assert!(!c.is_stale_for(1_200));
        assert!(c.is_stale_for(1_201));
        let tiny = Centre {
            mean: vec![0.0],
            vectors: 10,
        };
        assert!(!tiny.is_stale_for(999), "small tables are scanned whole");
        assert!(!Centre::due_for(999) && Centre::due_for(1_000));
        let settled = Centre {
            mean: vec![0.0],
            vectors: RECENTRE_FINAL,
        };
        assert!(settled.is_final() && !settled.is_stale_for(100 * RECENTRE_FINAL));
    }

    #[test]
    fn the_query_score_is_the_dot_product_with_the_signed_code() {
        let c = centre(vec![0.1, -0.2, 0.0, 0.3, 0.0, 0.0, 0.0, 0.0, 0.05]);
        let q = [0.9, 0.1, -0.4, 0.2, 0.0, 0.7, -0.3, 0.2, 0.6];
        let v = [1.0, -1.0, 0.5, 0.0, 0.2, -0.1, 0.0, 0.4, 0.0];
        let code = c.code(&v);
        let expected: f32 = (0..9)
            .map(|i| {
                let sign = if code[0] >> i & 1 == 1 { 1.0 } else { -1.0 };
                sign * (q[i] - c.mean[i])
            })
            .sum();
        let got = QueryScorer::new(&c, &q).score(&code);
        assert!((got - expected).abs() < 1e-5, "{got} vs {expected}");
    }
}
