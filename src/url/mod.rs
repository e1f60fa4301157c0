//! URL parsing: byte classes, the WHATWG state machine, hosts, and offsets.

pub mod class;
pub mod fast;
pub mod host;
pub mod parser;
pub mod parts;
pub mod simd;
