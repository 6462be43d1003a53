//! The decisions of the `write` family: how far each message of a
//! transcript is trusted (`taint`), and when a memory flush is due, what the
//! model is shown and what of its reply is written (`flush`).

pub mod flush;
pub mod taint;
