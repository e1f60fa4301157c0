//! The command line's own pieces (the binary's, not the library's): the
//! terminal (progress and the writers that share the screen with it) and
//! the config file of default flags, and directory arguments.

pub mod config;
pub mod inputs;
pub mod mine;
pub mod summarize;
pub mod term;
