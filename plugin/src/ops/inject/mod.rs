//! The `inject` family: lane 1 on every incoming message (`trigger`) and
//! lane 2, the bounded recall sub-agent (`escalate`).

pub mod escalate;
pub mod trigger;
