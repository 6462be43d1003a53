//! The language model the host lends, seen from the memory logic. Used only
//! where language judgement is needed (the memory flush), always with a
//! deadline, and its answer is checked by code before anything is written.

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    System,
    User,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CompletionRequest {
    pub purpose: &'static str,
    pub messages: Vec<(Role, String)>,
    pub max_output_tokens: u32,
    pub timeout_ms: u32,
}

pub trait Model {
    /// The model's text reply, or why there is none.
    fn complete(&self, request: &CompletionRequest) -> Result<String, String>;
}

/// No model: every operation that needs one says so and writes nothing.
pub struct NoModel;

impl Model for NoModel {
    fn complete(&self, _: &CompletionRequest) -> Result<String, String> {
        Err("no language model is configured".into())
    }
}
