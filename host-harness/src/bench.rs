//! `memory-harness bench`: deterministic synthetic workloads timed through
//! the real sandbox. Figures are printed as JSON; nothing here asserts a
//! time (benchmarks measure, tests check behaviour).

use crate::host::{wit, wit_inject, wit_intents};
use crate::session::Session;
use serde_json::{json, Value};
use std::time::Instant;

/// A small deterministic generator (64-bit LCG), so every run builds the
/// same workspace and messages.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        self.0 >> 33
    }

    fn word(&mut self, vocabulary: u64) -> String {
        let n = self.next() % vocabulary;
        // Pronounceable, distinct, never a stop word.
        let syllables = [
            "ka", "lo", "mi", "ru", "ten", "vos", "zar", "pel", "dun", "fig",
        ];
        let mut w = String::from("q");
        let mut v = n;
        for _ in 0..3 {
            w.push_str(syllables[(v % 10) as usize]);
            v /= 10;
        }
        w
    }

    fn words(&mut self, count: usize, vocabulary: u64) -> Vec<String> {
        (0..count).map(|_| self.word(vocabulary)).collect()
    }
}

/// Writes the lane-1 workspace: a MEMORY.md of `entries` annotated entries.
pub fn write_lane1_workspace(dir: &std::path::Path, entries: usize) -> anyhow::Result<()> {
    let mut rng = Rng(7);
    let mut memory = String::from("# Memory\n\n");
    for i in 0..entries {
        let text = rng.words(12, 1_000).join(" ");
        let t1 = rng.words(2, 1_000).join(" ");
        let t2 = rng.words(2, 1_000).join(" ");
        memory.push_str(&format!(
            "- Entry {i}: {text}. <!-- trigger: {t1}, {t2} --> <!-- importance: {} -->\n",
            1 + i % 10
        ));
    }
    std::fs::create_dir_all(dir)?;
    std::fs::write(dir.join("MEMORY.md"), memory)?;
    Ok(())
}

/// Lane 1 per message over `entries` curated entries and `intents` armed
/// intents: median, p95 and mean of the whole call as the host sees it.
pub fn lane1(session: &mut Session, intents: usize, messages: usize) -> anyhow::Result<Value> {
    let mut rng = Rng(11);
    let context = session.context();
    for _ in 0..intents {
        let spec = wit_intents::IntentSpec {
            text: format!("bring up {}", rng.words(6, 1_000).join(" ")),
            triggers: vec![rng.words(3, 1_000).join(" ")],
            due_at_ms: None,
            channel: None,
            sender: None,
            expires_in_ms: None,
            fire_budget: None,
            cooldown_ms: None,
            semantic: false,
        };
        session
            .host
            .intent_create(&spec, &context)
            .map_err(|e| anyhow::anyhow!("{e}"))?;
    }
    let mut times = Vec::with_capacity(messages);
    let mut blocks = 0usize;
    for i in 0..messages {
        let message = rng.words(15, 1_000).join(" ");
        let request = wit_inject::InjectRequest {
            message,
            mode: wit_inject::EscalationMode::Escalate,
            context: wit::TurnContext {
                now_ms: context.now_ms + i as i64 * 1_000,
                ..context.clone()
            },
        };
        let started = Instant::now();
        let result = session
            .host
            .inject(&request)
            .map_err(|e| anyhow::anyhow!("{e}"))?;
        times.push(started.elapsed().as_secs_f64() * 1_000.0);
        blocks += result.blocks.len();
    }
    times.sort_by(f64::total_cmp);
    let pick = |q: f64| times[((times.len() as f64 - 1.0) * q).round() as usize];
    Ok(json!({
        "benchmark": "lane1-inject",
        "intents": intents,
        "messages": messages,
        "median_ms": round3(pick(0.5)),
        "p95_ms": round3(pick(0.95)),
        "mean_ms": round3(times.iter().sum::<f64>() / times.len() as f64),
        "blocks_per_message": round3(blocks as f64 / messages as f64),
    }))
}

fn round3(x: f64) -> f64 {
    (x * 1_000.0).round() / 1_000.0
}
