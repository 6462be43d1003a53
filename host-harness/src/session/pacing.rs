//! How a full sync is cut into calls, and how long the rest will take.
//!
//! Each call is sized, in changed files and in texts sent to the embedder,
//! so that it takes about `CALL_TARGET`: long enough that listing the
//! workspace (every call does) costs little, short enough for live progress
//! and for an interruption to lose little (every call commits its work).
//! Embedding is by far the slow part of a first index (~100 texts/s for
//! all-MiniLM-L6-v2 on two cores against ~1,000 files/s without), so files
//! are indexed lexically at once and their vectors follow in later calls.

use std::time::Duration;

/// The time one sync call should take.
pub const CALL_TARGET: Duration = Duration::from_secs(2);
/// The first call's sizes, before anything is known of this machine.
pub const FIRST_FILES: u32 = 200;
pub const FIRST_EMBEDDINGS: u32 = 64;
const MIN_FILES: u32 = 50;
const MAX_FILES: u32 = 20_000;
const MIN_EMBEDDINGS: u32 = 32;
const MAX_EMBEDDINGS: u32 = 20_000;

/// The sizes of the next sync call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pace {
    /// Changed files the call may index.
    pub files: u32,
    /// Texts the call may send to the embedder.
    pub embeddings: u32,
}

impl Default for Pace {
    fn default() -> Pace {
        Pace {
            files: FIRST_FILES,
            embeddings: FIRST_EMBEDDINGS,
        }
    }
}

impl Pace {
    /// The next call's sizes after one that indexed `indexed` files and sent
    /// `embedded` texts to the embedder in `took`. A size the call did not
    /// use up taught nothing and stays; one it used up is scaled towards the
    /// target time, at most 4x per step so that one odd call cannot swing it.
    pub fn next(self, indexed: u32, embedded: u32, took: Duration) -> Pace {
        let scale = (CALL_TARGET.as_secs_f64() / took.as_secs_f64().max(1e-3)).clamp(0.25, 4.0);
        let scaled =
            |size: u32, min: u32, max: u32| ((size as f64 * scale).round() as u32).clamp(min, max);
        Pace {
            files: if indexed >= self.files {
                scaled(self.files, MIN_FILES, MAX_FILES)
            } else {
                self.files
            },
            embeddings: if embedded >= self.embeddings {
                scaled(self.embeddings, MIN_EMBEDDINGS, MAX_EMBEDDINGS)
            } else {
                self.embeddings
            },
        }
    }
}

/// How far a full sync has come, from its running totals.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct Progress {
    pub files_indexed: u32,
    pub files_pending: u32,
    /// Texts embedded by this sync.
    pub embedded: u32,
    /// Vectors this sync took from the embedding cache.
    pub cached: u32,
    /// Entries indexed without a vector so far.
    pub vectors_pending: u32,
    pub elapsed: Duration,
}

impl Progress {
    /// Vectors done and the estimated total: the files still to index will
    /// need as many per file as those indexed so far.
    pub fn vectors(&self) -> (u32, u32) {
        let done = self.embedded + self.cached;
        let per_file = if self.files_indexed == 0 {
            0.0
        } else {
            (done + self.vectors_pending) as f64 / self.files_indexed as f64
        };
        let to_come = (self.files_pending as f64 * per_file).round() as u32;
        (done, done + self.vectors_pending + to_come)
    }

    /// The time left at the rate so far: of embedding when this sync has
    /// embedded anything (it dominates), else of indexing files.
    pub fn eta(&self) -> Option<Duration> {
        let seconds = self.elapsed.as_secs_f64();
        let (done, total) = self.vectors();
        if self.files_pending == 0 && done >= total {
            return Some(Duration::ZERO);
        }
        if seconds <= 0.0 {
            return None;
        }
        let left = if self.embedded > 0 {
            (total - done) as f64 / (self.embedded as f64 / seconds)
        } else if self.files_indexed > 0 && self.vectors_pending == 0 {
            self.files_pending as f64 / (self.files_indexed as f64 / seconds)
        } else {
            return None;
        };
        Some(Duration::from_secs_f64(left.min(1e7)))
    }

    /// The embedding rate so far, texts per second.
    pub fn embed_rate(&self) -> Option<f64> {
        let seconds = self.elapsed.as_secs_f64();
        (self.embedded > 0 && seconds > 0.0).then(|| self.embedded as f64 / seconds)
    }

    /// "1,200/10,000 files · 34,000/310,000 vectors · 310/s · about 14m50s left".
    pub fn describe(&self) -> String {
        let files_total = self.files_indexed + self.files_pending;
        let mut parts = vec![format!(
            "{}/{} files",
            thousands(self.files_indexed),
            thousands(files_total)
        )];
        let (done, total) = self.vectors();
        if total > 0 {
            parts.push(format!("{}/{} vectors", thousands(done), thousands(total)));
        }
        if let Some(rate) = self.embed_rate() {
            parts.push(format!("{rate:.0}/s"));
        }
        match self.eta() {
            Some(left) if left > Duration::ZERO => {
                parts.push(format!("about {} left", duration(left)))
            }
            _ => {}
        }
        parts.join(" · ")
    }

    /// The share done, 0..=1: vectors when there are any, else files.
    pub fn fraction(&self) -> f64 {
        let (done, total) = self.vectors();
        let files_total = self.files_indexed + self.files_pending;
        if total > 0 {
            done as f64 / total as f64
        } else if files_total > 0 {
            self.files_indexed as f64 / files_total as f64
        } else {
            1.0
        }
    }
}

/// 31000 → "31,000".
pub fn thousands(n: u32) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// "14m50s", "2h05m", "9s".
pub fn duration(d: Duration) -> String {
    let s = d.as_secs();
    match s {
        0..=59 => format!("{s}s"),
        60..=3_599 => format!("{}m{:02}s", s / 60, s % 60),
        _ => format!("{}h{:02}m", s / 3_600, (s % 3_600) / 60),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    #[test]
    fn sizes_that_were_used_up_move_towards_the_target_time() {
        let pace = Pace::default();
        // Both used up in 500 ms: 4x under the target, both grow 4x.
        assert_eq!(
            pace.next(200, 64, ms(500)),
            Pace {
                files: 800,
                embeddings: 256
            }
        );
        // A slow embedder made the call take 8 s: a quarter of each.
        assert_eq!(
            pace.next(200, 64, ms(8_000)),
            Pace {
                files: 50,
                embeddings: MIN_EMBEDDINGS
            }
        );
        // Files ran out, embeddings did not: only what was used up moves.
        assert_eq!(
            Pace {
                files: 200,
                embeddings: 1_000
            }
            .next(37, 1_000, ms(4_000)),
            Pace {
                files: 200,
                embeddings: 500
            }
        );
        // Never above the caps.
        let big = Pace {
            files: MAX_FILES,
            embeddings: MAX_EMBEDDINGS,
        };
        assert_eq!(big.next(MAX_FILES, MAX_EMBEDDINGS, ms(1)), big);
    }

    #[test]
    fn the_time_left_follows_the_embedding_rate_and_the_files_to_come() {
        // 1,000 of 10,000 files indexed, 2,000 of their 20,000 entries
        // embedded in 20 s (100/s): 198,000 vectors to go, 33 minutes.
        let p = Progress {
            files_indexed: 1_000,
            files_pending: 9_000,
            embedded: 2_000,
            cached: 0,
            vectors_pending: 18_000,
            elapsed: Duration::from_secs(20),
        };
        assert_eq!(p.vectors(), (2_000, 200_000));
        assert_eq!(p.eta(), Some(Duration::from_secs(1_980)));
        assert_eq!(
            p.describe(),
            "1,000/10,000 files · 2,000/200,000 vectors · 100/s · about 33m00s left"
        );
        assert!((p.fraction() - 0.01).abs() < 1e-9);
    }

    #[test]
    fn without_embedding_the_time_left_follows_the_files() {
        let lexical = Progress {
            files_indexed: 500,
            files_pending: 1_500,
            elapsed: Duration::from_secs(1),
            ..Progress::default()
        };
        assert_eq!(lexical.eta(), Some(Duration::from_secs(3)));
        assert_eq!(lexical.describe(), "500/2,000 files · about 3s left");
        // All from the cache: nothing to time yet.
        let cached = Progress {
            files_indexed: 10,
            files_pending: 10,
            cached: 100,
            vectors_pending: 5,
            elapsed: Duration::from_secs(1),
            ..Progress::default()
        };
        assert_eq!(cached.eta(), None);
        let done = Progress {
            files_indexed: 10,
            embedded: 40,
            elapsed: Duration::from_secs(1),
            ..Progress::default()
        };
        assert_eq!(done.eta(), Some(Duration::ZERO));
        assert_eq!(done.fraction(), 1.0);
    }

    #[test]
    fn numbers_read_as_people_write_them() {
        assert_eq!(thousands(0), "0");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(31_000), "31,000");
        assert_eq!(thousands(2_000_000), "2,000,000");
        assert_eq!(duration(Duration::from_secs(9)), "9s");
        assert_eq!(duration(Duration::from_secs(890)), "14m50s");
        assert_eq!(duration(Duration::from_secs(7_500)), "2h05m");
    }
}
