//! The crate's resolved settings (`memory_core::config`, which the harness
//! links natively to resolve its configuration before any instance exists)
//! as the component's records.

use super::{wit_dream, wit_store};

/// `open`'s settings.
pub fn wit_settings(s: &memory_core::Settings) -> wit_store::Settings {
    wit_store::Settings {
        workspace: s.workspace.to_string_lossy().into_owned(),
        search: wit_store::SearchSettings {
            max_results: s.search.max_results,
            min_score: s.search.min_score,
            candidates_per_leg: s.search.candidates_per_leg,
            vector_weight: s.search.vector_weight,
            recency_half_life_days: s.search.recency_half_life_days,
            recency_floor: s.search.recency_floor,
            mmr_lambda: s.search.mmr_lambda,
        },
        chunking: wit_store::ChunkSettings {
            tokens: s.chunking.tokens,
            overlap: s.chunking.overlap,
        },
        fts_tokenizer: match s.fts_tokenizer {
            memory_core::FtsTokenizer::Unicode61 => wit_store::FtsTokenizer::Unicode61,
            memory_core::FtsTokenizer::Trigram => wit_store::FtsTokenizer::Trigram,
        },
        bootstrap: wit_store::BootstrapSettings {
            max_file_chars: budget(s.bootstrap.max_file_chars),
            max_user_file_chars: budget(s.bootstrap.max_user_file_chars),
            max_total_chars: budget(s.bootstrap.max_total_chars),
        },
    }
}

/// `dream.run`'s gates.
pub fn wit_dream_gates(g: &memory_core::logic::dream::signals::Gates) -> wit_dream::DreamGates {
    wit_dream::DreamGates {
        min_score: g.min_score,
        min_recalls: g.min_recalls,
        min_unique_queries: g.min_unique_queries,
        recency_half_life_days: g.recency_half_life_days,
        max_promotions: g.max_promotions,
        light_lookback_days: g.light_lookback_days,
        rem_lookback_days: g.rem_lookback_days,
        model_timeout_ms: g.model_timeout_ms,
    }
}

fn budget(chars: usize) -> u32 {
    u32::try_from(chars).unwrap_or(u32::MAX)
}
