//! The `dream` family, the dreaming sweep (`dream.run`, `dream.rollback`):
//! recall signals in, `DREAMS.md` blocks and gated promotions into
//! `MEMORY.md` out. The decisions are `logic::dream`'s pure functions; these
//! modules read the files, the ledger and the index, call the model once,
//! and write through hash-checked renames. The ledger keeps each sweep's
//! record (`storage::ledger::dreaming`).

mod dreams;
mod gather;
mod promote;
mod recover;
mod rollback;
mod sweep;
