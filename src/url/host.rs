//! Host parsing (stub: being written by a helper).
