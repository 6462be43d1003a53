//! The language model the host lends, seen from the memory logic. Used only
//! where language judgement is needed (the memory flush, the recall
//! sub-agent), always with a deadline, and its answers are checked by code
//! before anything is written or shown.

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    System,
    User,
    Assistant,
    Tool,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Message {
    pub role: Role,
    pub content: String,
    /// For `Tool` messages: the call answered.
    pub tool_call_id: Option<String>,
    /// For `Assistant` messages: the tool calls the model made.
    pub tool_calls: Vec<ToolCall>,
}

impl Message {
    pub fn new(role: Role, content: impl Into<String>) -> Message {
        Message {
            role,
            content: content.into(),
            tool_call_id: None,
            tool_calls: Vec::new(),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolDefinition {
    pub name: &'static str,
    pub description: &'static str,
    pub parameters_schema: &'static str,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolCall {
    pub id: String,
    pub name: String,
    /// The arguments object as JSON text (validated by the caller).
    pub arguments: String,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CompletionRequest {
    pub purpose: &'static str,
    pub messages: Vec<Message>,
    pub tools: Vec<ToolDefinition>,
    pub max_output_tokens: u32,
    pub timeout_ms: u32,
}

#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Completion {
    pub text: String,
    pub tool_calls: Vec<ToolCall>,
}

/// Why no completion came back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ModelFailure {
    Unavailable(String),
    Timeout(String),
    Failed(String),
}

impl std::fmt::Display for ModelFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ModelFailure::Unavailable(m) => write!(f, "no model: {m}"),
            ModelFailure::Timeout(m) => write!(f, "the model timed out: {m}"),
            ModelFailure::Failed(m) => write!(f, "the model failed: {m}"),
        }
    }
}

pub trait Model {
    fn complete(&self, request: &CompletionRequest) -> Result<Completion, ModelFailure>;
}

/// No model: every operation that needs one says so and writes nothing.
pub struct NoModel;

impl Model for NoModel {
    fn complete(&self, _: &CompletionRequest) -> Result<Completion, ModelFailure> {
        Err(ModelFailure::Unavailable(
            "no language model is configured".into(),
        ))
    }
}
