//! The command line's own pieces (the binary's, not the library's), so that
//! `main.rs` reads as the steps of a run: the flags (`args`), the run's
//! options from them (`options`), the inputs and directory arguments
//! (`inputs`), the config file of default flags (`config`), the terminal
//! (progress and the writers that share the screen with it, `term`), and
//! the `summarize` and `mine` subcommands.

pub mod args;
pub mod config;
pub mod inputs;
pub mod mine;
pub mod options;
pub mod summarize;
pub mod term;
