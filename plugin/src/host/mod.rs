//! What the host lends the component, seen from the memory logic: small
//! traits over the embedder and the language model, and the checks their
//! answers get (a host is not trusted to answer well-formed).

pub mod embedding;
pub mod model;
