//! The decisions of the `write` family: when a memory flush is due and what
//! of the model's reply is written (`flush`).

pub mod flush;
