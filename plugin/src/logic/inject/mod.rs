//! The decisions of the `inject` family: lane 1's trigger matching and
//! recall-intent detection (`trigger`, `recall_intent`), and lane 2's
//! bounded recall sub-agent (`escalate`).

pub mod escalate;
pub mod recall_intent;
pub mod trigger;
