//! What several commands print: the `note:` lines of a session, and the
//! human-readable form of a sync, the status, a search, the bootstrap, a
//! sweep and a fired intent. (`--json` output is `memory_harness::json`.)
//! These read the records the component returned, as the host module names
//! them.

use memory_harness::host::{wit_bootstrap, wit_dream, wit_intents, wit_recall, wit_store};
use memory_harness::json;
use memory_harness::session::Session;
use serde_json::{json, Value};

/// `note:` lines on stderr: why the index was read as it is.
pub fn notes(session: &Session) {
    for note in &session.notes {
        memory_harness::notes::note(note);
    }
}

/// `value` with the session's notes as `notes` (when there are any).
pub fn with_notes(mut value: Value, session: &Session) -> Value {
    if !session.notes.is_empty() {
        value["notes"] = json!(session.notes);
    }
    value
}

pub fn sync(r: &wit_store::SyncReport, as_json: bool) {
    if as_json {
        println!("{}", json::sync_report(r));
        return;
    }
    println!(
        "{} files: {} indexed, {} unchanged, {} removed; {} entries and windows; embeddings {} computed, {} cached",
        r.files_seen, r.files_indexed, r.files_unchanged, r.files_removed, r.chunks_indexed, r.embeddings_computed, r.embeddings_cached
    );
    if r.vectors_pending > 0 {
        println!(
            "{} entries have no vector yet (searched lexically); `index` embeds them",
            r.vectors_pending
        );
    }
    if let Some(reason) = &r.rebuilt {
        println!("index rebuilt: {reason}");
    }
    if let Some(problem) = &r.embedding_problem {
        println!("embeddings skipped (search stays lexical for those entries): {problem}");
    }
    for p in &r.problems {
        println!("  {}: {}", p.path, p.problem);
    }
}

pub fn status(s: &wit_store::StatusReport) {
    println!(
        "index      {} (schema {}, revision {})",
        s.index_path, s.schema_version, s.revision
    );
    println!(
        "files      {} ({} changed on disk since the last sync)",
        s.files, s.files_stale
    );
    println!(
        "entries    {} (+ {} daily-note windows)",
        s.entries, s.windows
    );
    println!(
        "search     {} — embedder {}, {} vectors, cache {}",
        s.search_mode, s.embedder, s.embedded, s.embedding_cache_entries
    );
    let classes: Vec<String> = s
        .by_source_class
        .iter()
        .map(|c| format!("{} {}", json::source_class(c.source_class), c.entries))
        .collect();
    let kinds: Vec<String> = s
        .by_session_kind
        .iter()
        .map(|k| format!("{} {}", json::session_kind(k.session_kind), k.entries))
        .collect();
    println!("provenance {}", classes.join(", "));
    println!("sessions   {}", kinds.join(", "));
    if let Some(why) = &s.provenance_lost {
        println!(
            "PROVENANCE LOST: {why}; entries in memory/ it cannot vouch for count as untrusted"
        );
    }
    if s.promotions_deferred > 0 {
        println!(
            "dreaming   budget full: {} deferred (MEMORY.md has no room within its budget; each sweep tries again)",
            s.promotions_deferred
        );
    }
    if let Some(problem) = &s.sweep_problem {
        println!("dreaming   {problem}");
    }
    if let Some(why) = &s.index_rebuilt {
        println!("rebuilt    {why} (shown until the next `index`)");
    }
    if !s.problems.is_empty() {
        println!("problems");
        for p in &s.problems {
            println!("  {}: {}", p.path, p.problem);
        }
    }
}

/// The `note:` line for an index rebuilt on its own.
pub fn rebuilt_note(why: &str) -> String {
    format!("{why}; run `index` to acknowledge it")
}

pub fn search(r: &wit_recall::SearchResult) {
    if let Some(why) = &r.index_rebuilt {
        memory_harness::notes::note(rebuilt_note(why));
    }
    if let Some(reason) = &r.degraded {
        println!("(lexical only: {reason})");
    }
    if r.hits.is_empty() {
        println!("no matches");
    }
    for (i, h) in r.hits.iter().enumerate() {
        println!(
            "{}. {}  score {:.3}  [{}/{}]",
            i + 1,
            h.citation,
            h.score,
            json::source_class(h.provenance.source_class),
            json::session_kind(h.provenance.session_kind)
        );
        for line in h.snippet.lines() {
            println!("   {line}");
        }
    }
}

pub fn bootstrap(b: &wit_bootstrap::BootstrapResult) {
    for f in &b.files {
        match (&f.present, &f.truncated) {
            (false, _) => println!("{}: missing (nothing injected)", f.path),
            (true, _) if f.skipped.is_some() => println!(
                "{}: SKIPPED ({})",
                f.path,
                f.skipped.as_deref().unwrap_or_default()
            ),
            (true, None) => println!("{}: {} characters injected", f.path, f.injected_chars),
            (true, Some(why)) => println!(
                "{}: TRUNCATED to {} of {} characters ({why})",
                f.path, f.injected_chars, f.original_chars
            ),
        }
    }
    println!(
        "total {} characters, digest {}\n",
        b.total_chars,
        &b.digest[..12]
    );
    println!("{}", b.text);
}

pub fn dream(r: &wit_dream::DreamReport, explain: bool) {
    let phases: Vec<&str> = r.phases.iter().map(|p| json::dream_phase(*p)).collect();
    println!(
        "{} {}: {} staged, {} themes, {} added, {} merged, {} superseded ({}){}",
        if explain { "explain" } else { "sweep" },
        phases.join("+"),
        r.staged,
        r.themes,
        r.added.len(),
        r.merged.len(),
        r.superseded.len(),
        json::dream_report(r)["consolidation"]
            .as_str()
            .unwrap_or(""),
        if r.sweep > 0 {
            format!(", recorded as sweep {}", r.sweep)
        } else {
            String::new()
        }
    );
    if let Some(why) = &r.fallback_reason {
        println!("fallback: {why}");
    }
    for line in &r.added {
        println!("  + {line}");
    }
    for line in &r.superseded {
        println!("  - {line}");
    }
    if explain || r.added.is_empty() {
        println!(
            "{:<16} {:>5} {:>7} {:>7} {:>4}  {:<40} why",
            "verdict", "score", "recalls", "queries", "days", "source"
        );
        for c in &r.candidates {
            println!(
                "{:<16} {:>5.3} {:>7} {:>7} {:>4}  {:<40} {}",
                json::verdict(c.verdict),
                c.signals.score,
                c.signals.recalls,
                c.signals.distinct_queries,
                c.signals.days,
                c.citation,
                c.reason
            );
        }
    }
}

/// How a fired intent reads: what `due` prints and `serve` delivers.
pub fn due_block(intent: &wit_intents::Intent) -> String {
    format!("due: intent {}: {}", intent.id, intent.text)
}
